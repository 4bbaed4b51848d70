#include "pgroups/layout/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/layout/mesh_config.hpp"

namespace pgroups {

void validate(const Cluster& cluster) {
  if (cluster.gpus_per_node < 1) {
    throw ConfigError(
        fmt::format("cluster gpus_per_node {} is invalid: it must be a positive integer", cluster.gpus_per_node));
  }
  if (cluster.node_count < 1) {
    throw ConfigError(fmt::format("cluster nodes {} is invalid: it must be a positive number of nodes (or host names)",
                                  cluster.node_count));
  }
  if (cluster.node_count > std::numeric_limits<std::int64_t>::max() / cluster.gpus_per_node) {
    throw ConfigError(fmt::format("cluster of {} nodes of {} GPUs has more than 2^63 - 1 GPUs", cluster.node_count,
                                  cluster.gpus_per_node));
  }
  if (!cluster.hosts.empty()) {
    if (static_cast<std::int64_t>(cluster.hosts.size()) != cluster.node_count) {
      throw ConfigError(
          fmt::format("cluster has {} host names for {} nodes", cluster.hosts.size(), cluster.node_count));
    }
    std::set<std::string_view> seen;
    for (const std::string& host : cluster.hosts) {
      if (host.empty()) throw ConfigError("cluster nodes: a host name is empty");
      if (!seen.insert(host).second) {
        throw ConfigError(fmt::format("cluster nodes: host {} is given twice", quoted_excerpt(host)));
      }
    }
  }
  if (!cluster.node_order.empty()) {
    if (static_cast<std::int64_t>(cluster.node_order.size()) != cluster.node_count) {
      throw ConfigError(
          fmt::format("cluster node order has {} entries for {} nodes", cluster.node_order.size(), cluster.node_count));
    }
    std::vector<bool> seen(cluster.node_order.size(), false);
    for (const std::int64_t position : cluster.node_order) {
      if (position < 0 || position >= cluster.node_count || seen[static_cast<std::size_t>(position)]) {
        throw ConfigError(fmt::format("cluster node order is not a permutation of the {} nodes (entry {})",
                                      cluster.node_count, position));
      }
      seen[static_cast<std::size_t>(position)] = true;
    }
  }
  const auto check_cost = [](double cost, std::string_view what) {
    if (!std::isfinite(cost) || cost < 0) {
      throw ConfigError(fmt::format("{} {} is invalid: a cost per byte must be a finite number >= 0", what, cost));
    }
  };
  check_cost(cluster.node_cost, "cluster node_cost");
  std::int64_t below = 1;
  std::set<std::string_view> names = {"node"};
  for (std::size_t i = 0; i < cluster.levels.size(); ++i) {
    const ClusterLevel& level = cluster.levels[i];
    const std::string what = fmt::format("cluster levels[{}]", i);
    if (level.name.empty()) throw ConfigError(fmt::format("{} has no name", what));
    if (!names.insert(level.name).second) {
      throw ConfigError(
          fmt::format("{} name {} is used twice (node is the node's own level)", what, quoted_excerpt(level.name)));
    }
    check_cost(level.cost, what + " (" + level.name + ") cost");
    if (level.nodes < 1 || level.nodes % below != 0) {
      throw ConfigError(
          fmt::format("{} ({}) nodes {} is invalid: a unit must hold a positive multiple of the {} "
                      "nodes of the level below, so that each unit lies inside one unit above",
                      what, level.name, level.nodes, below));
    }
    if (cluster.node_count % level.nodes != 0) {
      throw ConfigError(fmt::format("{} ({}) nodes {} does not divide the cluster's {} nodes: every unit must be full",
                                    what, level.name, level.nodes, cluster.node_count));
    }
    below = level.nodes;
  }
  for (const auto& [name, bytes] : cluster.traffic) {
    if (!std::isfinite(bytes) || bytes < 0) {
      throw ConfigError(
          fmt::format("traffic of {} is {}: relative bytes must be a finite number >= 0", quoted_excerpt(name), bytes));
    }
  }
}

double default_traffic(std::string_view kind_name) {
  const auto one = [](std::string_view name) -> double {
    if (name == "tp") return 16;
    if (name == "cp") return 8;
    if (name == "ep") return 4;
    if (name == "dp") return 2;
    if (name == "pp") return 1;
    if (name == "embd" || name == "pos_embd") return 0.1;
    return 1;
  };
  if (kind_name.find('-') == std::string_view::npos) return one(kind_name);
  double lowest = std::numeric_limits<double>::infinity();
  for (std::string_view part : split_group_token(kind_name)) lowest = std::min(lowest, one(part));
  return lowest;
}

double traffic_of(const Cluster& cluster, std::string_view kind_name) {
  for (const auto& [name, bytes] : cluster.traffic) {
    if (name == kind_name) return bytes;
  }
  return default_traffic(kind_name);
}

std::vector<std::int64_t> level_unit_of_ranks(const Cluster& cluster, const ClusterLevel& level) {
  // The topological position of each launch position (node_order's inverse).
  std::vector<std::int64_t> position(static_cast<std::size_t>(cluster.node_count));
  for (std::size_t i = 0; i < position.size(); ++i) position[i] = static_cast<std::int64_t>(i);
  for (std::size_t i = 0; i < cluster.node_order.size(); ++i) {
    position[static_cast<std::size_t>(cluster.node_order[i])] = static_cast<std::int64_t>(i);
  }
  std::vector<std::int64_t> units;
  units.reserve(static_cast<std::size_t>(cluster.node_count * cluster.gpus_per_node));
  for (std::int64_t rank = 0; rank < cluster.node_count * cluster.gpus_per_node; ++rank) {
    units.push_back(position[static_cast<std::size_t>(rank / cluster.gpus_per_node)] / level.nodes);
  }
  return units;
}

}  // namespace pgroups
