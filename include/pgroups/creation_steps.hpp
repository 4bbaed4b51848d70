#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/creation_steps.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/creation_steps.hpp"  // IWYU pragma: export
