#include "pgroups/nccl/mpi_bootstrap.hpp"

#include <fmt/format.h>

#include <climits>
#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/check.hpp"

namespace pgroups::nccl {

Broadcast mpi_broadcast(MPI_Comm comm) {
  return [comm](std::span<std::byte> bytes) { mpi::broadcast_from_rank0(comm, bytes, "the NCCL unique id"); };
}

int node_local_rank(MPI_Comm node_comm) {
  int rank = 0;
  mpi::check(MPI_Comm_rank(node_comm, &rank), "MPI_Comm_rank of the node communicator");
  return rank;
}

}  // namespace pgroups::nccl
