#include "pgroups/mpi/bootstrap.hpp"

#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/node.hpp"

namespace pgroups::mpi {

MpiBootstrap::MpiBootstrap(const Communicator& comm) : comm_(comm.dup()), rank_(comm_.rank()), size_(comm_.size()) {
  const NodeInfo node = node_info(comm_);
  local_rank_ = static_cast<int>(node.local_rank);
  local_size_ = static_cast<int>(node.processes);
}

std::vector<std::string> MpiBootstrap::all_gather(std::string_view bytes, std::chrono::milliseconds timeout,
                                                  std::string_view what) {
  return all_gather_until(comm_, bytes, Deadline(timeout), {"all-gather", what});
}

void MpiBootstrap::barrier(std::chrono::milliseconds timeout, std::string_view what) {
  barrier_until(comm_, Deadline(timeout), {"barrier", what});
}

}  // namespace pgroups::mpi
