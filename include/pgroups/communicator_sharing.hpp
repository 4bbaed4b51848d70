#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/communicator_sharing.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/communicator_sharing.hpp"  // IWYU pragma: export
