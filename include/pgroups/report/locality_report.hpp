#pragma once
/// \file
/// How a plan shows where its groups sit on nodes, as pure functions: the locality report
/// of `pgroups plan` (JSON and text) and Python's Plan.locality, the node line of
/// `explain`, the warnings for tensor groups across nodes (the CLI prints them on stderr,
/// Python returns them), and the nodes of a running job as `verify` reports them.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pgroups/launch/launcher.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/locality.hpp"

namespace pgroups::report {

/// Largest world whose groups `plan` and `explain` count by node: the count costs
/// O(groups of every mode), up to O(W * modes).
inline constexpr std::int64_t kMaxLocalityWorldSize = std::int64_t{1} << 22;

/// The nodes and the per-mode counts of one layout.
struct LocalityReport {
  NodeMap nodes;
  /// Empty when the world is above kMaxLocalityWorldSize (not counted).
  std::vector<KindLocality> modes;
  bool counted = true;
};

/// The report of a planned job when its configuration gives gpus_per_node, nothing
/// otherwise. Throws ConfigError (NodeMap::blocks) for a world that does not fill whole
/// nodes. Above kMaxLocalityWorldSize the groups are not counted.
[[nodiscard]] std::optional<LocalityReport> planned_locality(const Layout& layout);
/// The same for nodes of `gpus_per_node` ranks, whatever the configuration gives; ConfigError
/// for a G below 1 or one that does not divide the world.
[[nodiscard]] LocalityReport planned_locality(const Layout& layout, std::int64_t gpus_per_node);

/// The report for an observed placement (verify, info).
[[nodiscard]] LocalityReport observed_locality(const Layout& layout, const std::vector<std::int64_t>& node_of_rank);

/// {"gpus_per_node": G (null for an observed placement of unequal nodes), "nodes": N,
///  "ranks_per_node": [...] (observed only), "kinds": {name: {"groups_within_node": a,
///  "groups_across_nodes": b}}}, and the deprecated "modes", the same as "kinds".
[[nodiscard]] nlohmann::json locality_json(const LocalityReport& report);

/// A heading line and a table: per mode its group size and groups within / across nodes.
[[nodiscard]] std::string locality_text(const LocalityReport& report);

/// The warnings of locality_warnings() for the report, one sentence each (the CLI prints
/// each as "pgroups: warning: ..."). When the groups were not counted, each
/// bandwidth-hungry kind is judged by block_locality's closed form (bounded work at any W
/// and G) when its groups are consecutive ranks, and a warning says that it is not judged
/// otherwise.
[[nodiscard]] std::vector<std::string> locality_report_warnings(const Layout& layout, const LocalityReport& report);

/// explain: "node 3 of 128 (8 GPUs per node), local index 2".
[[nodiscard]] std::string node_text(const NodeMap& nodes, std::int64_t rank);
/// explain --format json: {"node": n, "local_index": l, "nodes": N, "gpus_per_node": G}.
[[nodiscard]] nlohmann::json node_json(const NodeMap& nodes, std::int64_t rank);

/// The nodes of a running job as verify gathers them (cli/node_report.hpp does, over MPI).
struct LiveNodes {
  /// On every rank: rank r's node as the world rank of the node's first rank.
  std::vector<std::int64_t> node_of_rank;
  /// Rank 0 only: per rank, its index in the shared-memory split and the launcher's
  /// local rank (-1 where the launcher gives none); per node, its host name.
  std::vector<std::int64_t> local_rank_on_node;
  std::vector<std::int64_t> launcher_local_rank;
  std::vector<std::string> hosts;
  /// Rank 0 only: per rank, its SLURM_TOPOLOGY_ADDR (empty where none); the pattern is
  /// rank 0's launcher's topology_pattern.
  std::vector<std::string> topology_address;
  /// Rank 0's launcher.
  LauncherInfo launcher;
  /// Where local_rank_on_node comes from, as the text report says it: an MPI job's
  /// shared-memory split, or a bootstrap's own node-local ranks.
  std::string local_rank_source = "the shared-memory split";
};

/// {"launcher", "hosts", "node_of_rank" (renumbered 0, 1, ...), "local_rank_on_node",
/// "launcher_local_rank", "launcher_agrees", plus locality_json's "gpus_per_node",
/// "nodes", "ranks_per_node" and "modes"}.
[[nodiscard]] nlohmann::json live_nodes_json(const LiveNodes& nodes, const LocalityReport& report);

/// A heading with the launcher and hosts, then locality_text.
[[nodiscard]] std::string live_nodes_text(const LiveNodes& nodes, const LocalityReport& report);

}  // namespace pgroups::report
