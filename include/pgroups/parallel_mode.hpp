#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/parallel_mode.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/parallel_mode.hpp"  // IWYU pragma: export
