#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/launcher.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/launcher.hpp"  // IWYU pragma: export
