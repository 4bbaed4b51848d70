#include "mpi_job.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <utility>

#include "output.hpp"
#include "pgroups/error.hpp"
#include "pgroups/mpi/error.hpp"
#include "pgroups/mpi/session.hpp"

namespace pgroups::cli {
namespace {

// The smallest and largest status over all ranks, in one reduction.
std::pair<int, int> status_range(MPI_Comm comm, int status) {
  std::array<int, 2> local = {status, -status};
  std::array<int, 2> reduced = {0, 0};
  mpi::check(MPI_Allreduce(local.data(), reduced.data(), 2, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  return {reduced[0], -reduced[1]};
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

std::optional<int> settle(MPI_Comm comm, int rank, const std::optional<LocalFailure>& failure) {
  const auto [best, worst] = status_range(comm, failure ? failure->code : 0);
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

}  // namespace pgroups::cli
