#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/mesh.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/mesh.hpp"  // IWYU pragma: export
