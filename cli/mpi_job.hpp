#pragma once
// How the MPI commands (verify, bench) end a job: no rank may be left waiting. A step
// whose failure can differ between ranks is followed by an agreement on its outcome;
// errors the context throws on every rank alike (ConfigError, MismatchError) make every
// rank return; anything that can leave other ranks inside a collective ends the job.
// Every wait has a deadline: the collectives after creation run in a WatchedPhase, and
// so does MPI_Finalize (finish_job).

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

/// A local step's failure: the exit status and the message.
struct LocalFailure {
  int code = 0;
  std::string message;
};

/// The documented exit status of an exception (ExitCode of a pgroups::Error, internal
/// otherwise).
[[nodiscard]] int exit_status_of(const std::exception& error);

/// Prints "pgroups: error: ..." once (rank 0) when every rank shares the message, or
/// tagged with the rank when it is this rank's own.
void print_job_error(int rank, bool shared_by_all, const std::string& message);

/// Collective: every rank passes its own outcome of a local step. When any rank failed,
/// each failed rank reports and all return the worst status, so that MPI_Finalize is
/// reached everywhere; nothing when every rank succeeded. Waits for the other ranks at
/// most `timeout` (zero: no limit); past it, this rank reports the timeout and ends the
/// job with ExitCode::timeout.
[[nodiscard]] std::optional<int> settle(MPI_Comm comm, int rank, const std::optional<LocalFailure>& failure,
                                        std::chrono::milliseconds timeout);

/// Handles an exception thrown by a collective step: ConfigError and MismatchError are
/// raised on every rank alike, so rank 0 reports and the status is returned; any other
/// error is reported by its rank and ends the job (MPI_Abort), since other ranks may be
/// waiting inside a collective.
[[nodiscard]] int end_collective_step(MPI_Comm comm, int rank, const std::exception& error);

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

/// The last step of a job: MPI_Finalize, which waits for the other ranks, in a
/// WatchedPhase named "finalize".
void finish_job(mpi::Session& session, const ContextOptions& options, int rank, int size);

}  // namespace pgroups::cli
