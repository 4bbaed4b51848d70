#pragma once
/// \file
/// Where a rank sits on its machine: the processes that share its memory (a node).

#include <cstdint>
#include <optional>

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

/// The same answer without communication, from what the launcher told this process:
/// Open MPI's OMPI_COMM_WORLD_LOCAL_RANK and OMPI_COMM_WORLD_LOCAL_SIZE, valid only for
/// a communicator congruent to MPI_COMM_WORLD. Nothing when `comm` is another
/// communicator or the variables are absent or malformed. Local; O(1).
[[nodiscard]] std::optional<NodeInfo> node_info_from_launcher(const Communicator& comm);

}  // namespace pgroups::mpi
