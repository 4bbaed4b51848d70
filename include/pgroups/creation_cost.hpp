#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/creation_cost.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/creation_cost.hpp"  // IWYU pragma: export
