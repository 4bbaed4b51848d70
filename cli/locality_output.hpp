#pragma once
// How the CLI shows where groups sit on nodes: the locality report of `plan` (JSON and
// text), the node line of `explain`, and the warnings for tensor groups across nodes.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/locality.hpp"

namespace pgroups::cli {

/// Largest world whose groups `plan` and `explain` count by node: the count costs
/// O(groups of every mode), up to O(W * modes).
inline constexpr std::int64_t kMaxLocalityWorldSize = std::int64_t{1} << 22;

/// The nodes and the per-mode counts of one layout.
struct LocalityReport {
  NodeMap nodes;
  /// Empty when the world is above kMaxLocalityWorldSize (not counted).
  std::vector<ModeLocality> modes;
  bool counted = true;
};

/// The report of a planned job when its configuration gives gpus_per_node, nothing
/// otherwise. Throws ConfigError (NodeMap::blocks) for a world that does not fill whole
/// nodes. Above kMaxLocalityWorldSize the groups are not counted.
[[nodiscard]] std::optional<LocalityReport> planned_locality(const Layout& layout);

/// The report for an observed placement (verify, info).
[[nodiscard]] LocalityReport observed_locality(const Layout& layout, const std::vector<std::int64_t>& node_of_rank);

/// {"gpus_per_node": G (null for an observed placement of unequal nodes), "nodes": N,
///  "ranks_per_node": [...] (observed only), "modes": {name: {"groups_within_node": a,
///  "groups_across_nodes": b}}}.
[[nodiscard]] nlohmann::json locality_json(const LocalityReport& report);

/// A heading line and a table: per mode its group size and groups within / across nodes.
[[nodiscard]] std::string locality_text(const LocalityReport& report);

/// Prints each of locality_warnings() on stderr as "pgroups: warning: ...". When the
/// groups were not counted, each bandwidth-hungry kind is judged by block_locality's
/// closed form (bounded work at any W and G) when its groups are consecutive ranks, and
/// a warning says that it is not judged otherwise.
void print_locality_warnings(const Layout& layout, const LocalityReport& report);

/// explain: "node 3 of 128 (8 GPUs per node), local index 2".
[[nodiscard]] std::string node_text(const NodeMap& nodes, std::int64_t rank);
/// explain --format json: {"node": n, "local_index": l, "nodes": N, "gpus_per_node": G}.
[[nodiscard]] nlohmann::json node_json(const NodeMap& nodes, std::int64_t rank);

}  // namespace pgroups::cli
