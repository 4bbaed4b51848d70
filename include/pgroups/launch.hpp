#pragma once
/// \file
/// Umbrella of the launch and its environment (target pgroups::launch): which launcher
/// started this process and what it says, and how long a rank waits. No MPI.

#include "pgroups/launch/launcher.hpp"  // IWYU pragma: export
#include "pgroups/launch/timeout.hpp"  // IWYU pragma: export
