#pragma once
/// \file
/// Where a rank sits on its machine: the processes that share its memory (a node).

#include <cstdint>

#include "pgroups/mpi/communicator.hpp"

namespace pgroups::mpi {

struct NodeInfo {
  /// Processes of the communicator on this node.
  std::int64_t processes = 1;
  /// This process's index among them (ordered by rank in the communicator).
  std::int64_t local_rank = 0;
};

/// Collective over `comm`: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), read, freed.
/// Throws BackendError.
[[nodiscard]] NodeInfo node_info(const Communicator& comm);

}  // namespace pgroups::mpi
