#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/locality.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/locality.hpp"  // IWYU pragma: export
