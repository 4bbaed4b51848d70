#pragma once
// How the commands that run on a bootstrap (verify --backend gloo) start a job and settle
// a local step's outcome: the bootstrap of --bootstrap through launch's one door
// (start_bootstrap; MPI's, registered by main, starts and ends MPI itself). Every wait is
// the bootstrap's, bounded by the timeout, so no rank is left waiting.

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "mpi_job.hpp"  // LocalFailure, print_job_error, exit_status_of
#include "pgroups/launch/bootstrap.hpp"

namespace pgroups::cli {

/// A whole command on a bootstrap: starts the one `bootstrap` names (start_bootstrap), runs
/// `job` on it with the command's ContextOptions (their timeout `timeout`, the one the
/// command resolved), then closes the bootstrap (MPI's ends MPI
/// where it started it); returns `job`'s status. Start-up errors are thrown.
[[nodiscard]] int run_on_bootstrap(std::string_view bootstrap, std::chrono::milliseconds timeout,
                                   const std::function<int(Bootstrap&, ContextOptions&)>& job);

/// Collective over the bootstrap: settle (mpi_job.hpp) on a bootstrap. When any rank
/// failed, each failed rank reports and all return the worst status; nothing when every
/// rank succeeded. A rank missing past the timeout makes the others report the
/// TimeoutError and return ExitCode::timeout. A status that is not an exit code (a process
/// of another protocol on the same store) is that rank's backend failure: every rank says
/// which rank sent what and returns ExitCode::backend.
[[nodiscard]] std::optional<int> settle_on(Bootstrap& bootstrap, const std::optional<LocalFailure>& failure,
                                           std::chrono::milliseconds timeout);

/// The end of a collective step on a bootstrap that threw: ConfigError and MismatchError
/// are thrown on every rank alike (rank 0 reports); any other error is this rank's own.
/// Returns the error's status: no rank waits past its timeout, so none is aborted.
[[nodiscard]] int end_step_on_bootstrap(int rank, const std::exception& error);

}  // namespace pgroups::cli
