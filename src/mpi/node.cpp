#include "pgroups/mpi/node.hpp"

#include "pgroups/mpi/error.hpp"

namespace pgroups::mpi {

NodeInfo node_info(const Communicator& comm) {
  MPI_Comm shared = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &shared),
        "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  const Communicator node = Communicator::adopt(shared);
  return {node.size(), node.rank()};
}

}  // namespace pgroups::mpi
