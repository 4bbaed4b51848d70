#pragma once
/// \file
/// Umbrella of the launch and its environment (target pgroups::launch): which launcher
/// started this process and what it says, how long a rank waits, and the bootstrap a job
/// has before its communicators (PMIx's among them). No MPI.

#include "pgroups/launch/attempt.hpp"  // IWYU pragma: export
#include "pgroups/launch/bootstrap.hpp"  // IWYU pragma: export
#include "pgroups/launch/callback_bootstrap.hpp"  // IWYU pragma: export
#include "pgroups/launch/env_bootstrap.hpp"  // IWYU pragma: export
#include "pgroups/launch/env_launch.hpp"  // IWYU pragma: export
#include "pgroups/launch/launcher.hpp"  // IWYU pragma: export
#include "pgroups/launch/outcome.hpp"  // IWYU pragma: export
#include "pgroups/launch/pmix_bootstrap.hpp"  // IWYU pragma: export
#include "pgroups/launch/store.hpp"  // IWYU pragma: export
#include "pgroups/launch/store_keys.hpp"  // IWYU pragma: export
#include "pgroups/launch/tcp_store.hpp"  // IWYU pragma: export
#include "pgroups/launch/timeout.hpp"  // IWYU pragma: export
