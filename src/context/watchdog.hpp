#pragma once
// The watchdog of the context's blocking steps is the MPI backend's (pgroups/mpi/
// watchdog.hpp, where programs can use it too); these names keep the context's own.

#include "pgroups/mpi/watchdog.hpp"

namespace pgroups::detail {

using Watchdog = mpi::Watchdog;
using mpi::end_process_on_timeout;

}  // namespace pgroups::detail
