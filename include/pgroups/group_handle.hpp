#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/context/group_handle.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/context/group_handle.hpp"  // IWYU pragma: export
