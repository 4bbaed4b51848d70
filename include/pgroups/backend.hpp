#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/context/backend.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/context/backend.hpp"  // IWYU pragma: export
