#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/group_check.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/group_check.hpp"  // IWYU pragma: export
