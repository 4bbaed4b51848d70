#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/parallel_config.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/parallel_config.hpp"  // IWYU pragma: export
