#pragma once
// How the commands that run on a bootstrap (verify --backend gloo) start a job and settle
// a local step's outcome: the bootstrap of --bootstrap (choose_bootstrap), MPI started
// only for the MPI one. Every wait is the bootstrap's, bounded by the timeout, so no rank
// is left waiting and no watchdog is needed.

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "mpi_job.hpp"  // LocalFailure, print_job_error, exit_status_of
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/mpi/session.hpp"

namespace pgroups::cli {

struct BootstrapJob {
  std::unique_ptr<mpi::Session> session;  // the MPI bootstrap's MPI; empty otherwise
  std::unique_ptr<Bootstrap> bootstrap;   // destroyed before the session (declared after it)
};

/// The bootstrap `requested` resolves to in this process (choose_bootstrap over its
/// environment): MPI started under a watchdog (start_mpi) with an mpi::MpiBootstrap of
/// its world, PMIx's, or the environment's. Throws ConfigError (a kind not built, no
/// launcher for it), TimeoutError and BackendError, on this rank.
[[nodiscard]] BootstrapJob start_bootstrap(BootstrapKind requested, std::chrono::milliseconds timeout);

/// A whole command on a bootstrap: starts the one `bootstrap` names (start_bootstrap), runs
/// `job` on it with the command's ContextOptions, closes the bootstrap, then MPI where the
/// bootstrap started it (finish_job); returns `job`'s status. Start-up errors are thrown.
[[nodiscard]] int run_on_bootstrap(std::string_view bootstrap, std::optional<std::chrono::milliseconds> timeout,
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
