#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/timeout.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/timeout.hpp"  // IWYU pragma: export
