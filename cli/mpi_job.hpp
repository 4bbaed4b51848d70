#pragma once
// A job under MPI (job.hpp's JobTransport over MPI_COMM_WORLD, mpi_job_transport): the
// one place in cli/ with raw MPI. MPI cannot cancel a blocking collective, so every wait
// has a watchdog (WatchedPhase), a rank's own failure inside a collective step ends the
// job (MPI_Abort), and the settle of a local step that times out does too.

#include <mpi.h>

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "pgroups/context/context_options.hpp"
#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/session.hpp"
#include "pgroups/mpi/watchdog.hpp"

namespace pgroups::cli {

/// A phase of a job after group creation in which the ranks wait for each other (the
/// checks, the gathering of results, each measurement, MPI_Finalize). On construction it
/// runs the fault-injection hook for `step` (options.before_step, as the context does for
/// its own steps), then arms a watchdog with options.timeout, which the command has
/// resolved (MpiOptions::in_effect; zero: none; StateError when it has not), counted from
/// there: when this rank is still blocked in the phase at the deadline, it
/// prints the timeout message naming `step` and ends the process with ExitCode::timeout.
/// Disarmed on destruction.
class WatchedPhase {
 public:
  WatchedPhase(const ContextOptions& options, int rank, int size, const mpi::Step& step);

  WatchedPhase(const WatchedPhase&) = delete;
  WatchedPhase& operator=(const WatchedPhase&) = delete;

 private:
  mpi::Watchdog watchdog_;
  mpi::Watchdog::Guard guard_;
};

}  // namespace pgroups::cli
