#include "pgroups/mpi/outcome.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/outcome.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/check.hpp"

namespace pgroups::mpi {

void require_success_everywhere(const Communicator& comm, const std::exception_ptr& local, std::string_view step) {
  const int failed = local ? 1 : 0;
  int any_failed = 0;
  check(MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm.get()), "MPI_Allreduce");
  if (any_failed == 0) return;

  // The failure path: every rank learns who failed and the first failed rank's message,
  // so that all of them can say why nothing more will be created.
  const int size = comm.size();
  std::vector<int> flags(static_cast<std::size_t>(size));
  check(MPI_Allgather(&failed, 1, MPI_INT, flags.data(), 1, MPI_INT, comm.get()), "MPI_Allgather");
  std::vector<int> failed_ranks;
  for (int r = 0; r < size; ++r) {
    if (flags[static_cast<std::size_t>(r)] != 0) failed_ranks.push_back(r);
  }
  const int first = failed_ranks.front();
  std::string message = comm.rank() == first ? message_of(local) : std::string();
  int length = static_cast<int>(message.size());
  check(MPI_Bcast(&length, 1, MPI_INT, first, comm.get()), "MPI_Bcast");
  message.resize(static_cast<std::size_t>(length));
  check(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm.get()), "MPI_Bcast");

  if (local) std::rethrow_exception(local);
  throw BackendError(failed_elsewhere(step, failed_ranks, message));
}

}  // namespace pgroups::mpi
