#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/config/config_reader.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/config/config_reader.hpp"  // IWYU pragma: export
