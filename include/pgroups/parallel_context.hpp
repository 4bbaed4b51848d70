#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/context/parallel_context.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/context/parallel_context.hpp"  // IWYU pragma: export
