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

/// The same answer without communication, from what the MPI launcher told this process
/// (detect_launcher, pgroups/launch/launcher.hpp: Open MPI's, MPICH Hydra's or Slurm's local
/// rank and size), valid only for a communicator congruent to MPI_COMM_WORLD and only
/// when the launcher's rank and world size are this rank's in `comm`. Nothing when
/// `comm` is another communicator or the variables are absent, malformed, contradictory
/// or another job's. Local; O(1).
[[nodiscard]] std::optional<NodeInfo> node_info_from_launcher(const Communicator& comm);

}  // namespace pgroups::mpi
