#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/context/process_group_initializer.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/context/process_group_initializer.hpp"  // IWYU pragma: export
