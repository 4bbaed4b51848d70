#pragma once
/// \file
/// Cluster: where a job's GPUs sit, as `pgroups place` reads it (docs/using/placement.md). GPUs
/// fill nodes of gpus_per_node; nodes fill units of each level above the node (an NVLink
/// domain, a leaf switch, a spine, a rack), each unit holding the same number of nodes and
/// lying inside one unit of the next level. Crossing a level costs its `cost` per byte.
///
/// The nodes' launch order (the launcher's rank order: rank r runs on node r / gpus_per_node)
/// need not keep each unit's nodes together; `node_order` says which launch position holds
/// each node in the order that does (its "topological" order). A cluster value is plain
/// data; validate() is the one check.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pgroups {

/// One level above the node.
struct ClusterLevel {
  std::string name;
  /// How many consecutive nodes (in topological order) one unit holds.
  std::int64_t nodes = 1;
  /// Cost per byte that crosses this level's units.
  double cost = 1;
  friend bool operator==(const ClusterLevel&, const ClusterLevel&) = default;
};

struct Cluster {
  std::int64_t gpus_per_node = 0;
  std::int64_t node_count = 0;
  /// Host names in launch order; empty when the cluster was given as a count.
  std::vector<std::string> hosts;
  /// Entry i: the launch position of the node at topological position i; empty when the
  /// launch order is the topological order.
  std::vector<std::int64_t> node_order;
  /// Cost per byte that crosses nodes.
  double node_cost = 1;
  /// Levels above the node, innermost first.
  std::vector<ClusterLevel> levels;
  /// Kind name -> relative bytes, overriding default_traffic (names as given).
  std::vector<std::pair<std::string, double>> traffic;
  friend bool operator==(const Cluster&, const Cluster&) = default;
};

/// Checks a cluster; ConfigError naming the field and the rule: gpus_per_node and node_count
/// positive, their product within int64; hosts (when given) one per node and distinct;
/// node_order a permutation of the nodes; costs finite and >= 0; level names distinct, not
/// "node", each level's nodes a positive multiple of the level below's (1 for the node) that
/// divides node_count; traffic values finite and >= 0.
void validate(const Cluster& cluster);

/// Entry r: the unit of `level` (one of cluster.levels) that holds launcher rank r's node,
/// for every rank of the cluster (rank r runs on node r / gpus_per_node in launch order;
/// units count in topological order). What the placement's picture draws. O(ranks).
[[nodiscard]] std::vector<std::int64_t> level_unit_of_ranks(const Cluster& cluster, const ClusterLevel& level);

/// The relative bytes a kind moves when the cluster gives none for it: tp 16, cp 8, ep 4,
/// dp 2, pp 1, embd and pos_embd 0.1 (the heaviest collectives first: tensor-parallel
/// all-reduces every layer, pipeline sends activations once per micro-batch); a kind of
/// several dimensions the smallest of its dimensions'; any other name 1.
[[nodiscard]] double default_traffic(std::string_view kind_name);

/// The cluster's traffic for a kind: its `traffic` entry, else default_traffic.
[[nodiscard]] double traffic_of(const Cluster& cluster, std::string_view kind_name);

}  // namespace pgroups
