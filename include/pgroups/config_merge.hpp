#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/config/config_merge.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/config/config_merge.hpp"  // IWYU pragma: export
