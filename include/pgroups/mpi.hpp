#pragma once
/// \file
/// Umbrella of the MPI backend (target pgroups::mpi). Needs MPI.

#include "pgroups/mpi/agreement.hpp"  // IWYU pragma: export
#include "pgroups/mpi/bootstrap.hpp"  // IWYU pragma: export
#include "pgroups/mpi/check.hpp"  // IWYU pragma: export
#include "pgroups/mpi/communicator.hpp"  // IWYU pragma: export
#include "pgroups/mpi/creation_strategy.hpp"  // IWYU pragma: export
#include "pgroups/mpi/deadline.hpp"  // IWYU pragma: export
#include "pgroups/mpi/node.hpp"  // IWYU pragma: export
#include "pgroups/mpi/outcome.hpp"  // IWYU pragma: export
#include "pgroups/mpi/session.hpp"  // IWYU pragma: export
#include "pgroups/mpi/strategy.hpp"  // IWYU pragma: export
#include "pgroups/mpi/version.hpp"  // IWYU pragma: export
#include "pgroups/mpi/wait_clock.hpp"  // IWYU pragma: export
#include "pgroups/mpi/watchdog.hpp"  // IWYU pragma: export
