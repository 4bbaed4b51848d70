#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/error.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/error.hpp"  // IWYU pragma: export
