#include "mpi_job.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "output.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/mpi/check.hpp"
#include "pgroups/mpi/session.hpp"

namespace pgroups::cli {
namespace {

// The smallest and largest status over all ranks, in one reduction that waits at most
// `timeout`.
std::pair<int, int> status_range(MPI_Comm comm, int status, std::chrono::milliseconds timeout) {
  const std::array<std::int64_t, 2> local = {status, -status};
  const std::vector<std::int64_t> reduced =
      mpi::min_until(mpi::Communicator::borrow(comm), local, mpi::Deadline(timeout),
                     {"settle", "the agreement on every rank's set-up"});
  return {static_cast<int>(reduced[0]), static_cast<int>(-reduced[1])};
}

// The step before which the phase's fault, if any, strikes; then the phase's deadline, of
// the timeout the command resolved.
mpi::Deadline announce(const ContextOptions& options, const mpi::Step& step) {
  if (options.before_step) options.before_step(step.name);
  if (!options.timeout) throw StateError(fmt::format("the phase '{}' has no timeout resolved", step.name));
  return mpi::Deadline(*options.timeout);
}

}  // namespace

int exit_status_of(const std::exception& error) {
  if (const auto* known = dynamic_cast<const Error*>(&error)) return static_cast<int>(known->exit_code());
  return static_cast<int>(ExitCode::internal);
}

void print_job_error(int rank, bool shared_by_all, const std::string& message) {
  if (shared_by_all) {
    if (rank == 0) std::fputs(error_line(message).c_str(), stderr);
  } else {
    std::fputs(error_line(message, fmt::format("pgroups: error on rank {}: ", rank)).c_str(), stderr);
  }
}

std::optional<int> settle(MPI_Comm comm, int rank, const std::optional<LocalFailure>& failure,
                          std::chrono::milliseconds timeout) {
  std::pair<int, int> range;
  try {
    range = status_range(comm, failure ? failure->code : 0, timeout);
  } catch (const TimeoutError& error) {
    // The reduction stays pending (MPI cannot cancel it), so MPI_Finalize could hang.
    print_job_error(rank, false, error.what());
    mpi::abort_job(comm, static_cast<int>(ExitCode::timeout));
  }
  const auto [best, worst] = range;
  if (worst == 0) return std::nullopt;
  if (failure) print_job_error(rank, best == worst, failure->message);
  return worst;
}

int end_collective_step(MPI_Comm comm, int rank, const std::exception& error) {
  if (dynamic_cast<const ConfigError*>(&error) != nullptr || dynamic_cast<const MismatchError*>(&error) != nullptr) {
    print_job_error(rank, true, error.what());
    return exit_status_of(error);
  }
  print_job_error(rank, false, error.what());
  mpi::abort_job(comm, exit_status_of(error));
}

WatchedPhase::WatchedPhase(const ContextOptions& options, int rank, int size, const mpi::Step& step)
    : watchdog_(announce(options, step), rank, size), guard_(watchdog_.enter(step)) {}

void finish_job(mpi::Session& session, const ContextOptions& options, int rank, int size) {
  const WatchedPhase phase(options, rank, size, {"finalize", "MPI_Finalize, the end of the job"});
  session.finalize();
}

}  // namespace pgroups::cli
