#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/context/context_options.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/context/context_options.hpp"  // IWYU pragma: export
