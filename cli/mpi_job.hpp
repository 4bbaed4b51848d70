#pragma once
// How the MPI commands (verify, bench) end a job: no rank may be left waiting. A step
// whose failure can differ between ranks is followed by an agreement on its outcome;
// errors the context throws on every rank alike (ConfigError, MismatchError) make every
// rank return; anything that can leave other ranks inside a collective ends the job.

#include <mpi.h>

#include <exception>
#include <optional>
#include <string>

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
/// reached everywhere; nothing when every rank succeeded.
[[nodiscard]] std::optional<int> settle(MPI_Comm comm, int rank, const std::optional<LocalFailure>& failure);

/// Handles an exception thrown by a collective step: ConfigError and MismatchError are
/// raised on every rank alike, so rank 0 reports and the status is returned; any other
/// error is reported by its rank and ends the job (MPI_Abort), since other ranks may be
/// waiting inside a collective.
[[nodiscard]] int end_collective_step(MPI_Comm comm, int rank, const std::exception& error);

}  // namespace pgroups::cli
