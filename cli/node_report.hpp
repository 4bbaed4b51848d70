#pragma once
// The nodes of a running job, as `verify` reports them: which node each rank is on
// (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), the hosts, what the launcher's
// variables say (pgroups/layout/launcher.hpp), and each mode's groups within and across those
// nodes (pgroups/layout/locality.hpp).

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "locality_output.hpp"
#include "pgroups/layout/launcher.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups::cli {

struct LiveNodes {
  /// On every rank: rank r's node as the world rank of the node's first rank.
  std::vector<std::int64_t> node_of_rank;
  /// Rank 0 only: per rank, its index in the shared-memory split and the launcher's
  /// local rank (-1 where the launcher gives none); per node, its host name.
  std::vector<std::int64_t> local_rank_on_node;
  std::vector<std::int64_t> launcher_local_rank;
  std::vector<std::string> hosts;
  /// Rank 0's launcher.
  LauncherInfo launcher;
};

/// Collective over `world`: one MPI_Comm_split_type, an MPI_Allreduce on the node, an
/// MPI_Allgather and two MPI_Gathers on the world. Throws BackendError.
[[nodiscard]] LiveNodes gather_live_nodes(MPI_Comm world);

/// Rank 0: {"launcher", "hosts", "node_of_rank" (renumbered 0, 1, ...),
/// "local_rank_on_node", "launcher_local_rank", "launcher_agrees", plus locality_json's
/// "gpus_per_node", "nodes", "ranks_per_node" and "modes"}.
[[nodiscard]] nlohmann::json live_nodes_json(const LiveNodes& nodes, const LocalityReport& report);

/// Rank 0: a heading with the launcher and hosts, then locality_text.
[[nodiscard]] std::string live_nodes_text(const LiveNodes& nodes, const LocalityReport& report);

}  // namespace pgroups::cli
