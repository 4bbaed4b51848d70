#include "pgroups/report/placement_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/config/config_json.hpp"
#include "pgroups/report/plan_report.hpp"

namespace pgroups::report {
namespace {

std::string number(double value) {
  if (value == static_cast<double>(static_cast<std::int64_t>(value)) && value < 9.0e15 && value > -9.0e15) {
    return fmt::format("{}", static_cast<std::int64_t>(value));
  }
  return fmt::format("{:.6g}", value);
}

void table(std::string& out, const PlacementResult& result, const PlacementCost& placement) {
  std::vector<std::string> header = {"kind", "size", "groups", "traffic"};
  for (const std::string& level : result.levels) header.push_back(level + " within/cross");
  header.emplace_back("cost");
  std::vector<std::vector<std::string>> rows = {header};
  for (const KindCost& kind : placement.kinds) {
    std::vector<std::string> row = {kind.name, std::to_string(kind.group_size), std::to_string(kind.groups),
                                    number(kind.traffic)};
    for (std::size_t l = 0; l < kind.crossing.size(); ++l) {
      row.push_back(fmt::format("{}/{}", kind.groups - kind.crossing[l], kind.crossing[l]));
    }
    row.push_back(number(kind.cost));
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += c == 0 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("  {:>{}}", row[c], width[c]);
    }
    out += line + "\n";
  }
}

nlohmann::json crossing_json(const PlacementResult& result, const PlacementCost& placement) {
  nlohmann::json out = nlohmann::json::object();
  for (const KindCost& kind : placement.kinds) {
    nlohmann::json levels = nlohmann::json::object();
    for (std::size_t l = 0; l < kind.crossing.size(); ++l) levels[result.levels[l]] = kind.crossing[l];
    out[kind.name] = std::move(levels);
  }
  return out;
}

std::string host_of(const Cluster& cluster, std::int64_t launcher_rank) {
  return cluster.hosts[static_cast<std::size_t>(launcher_rank / cluster.gpus_per_node)];
}

// What an Open MPI rankfile line (`rank R=HOST slot=S`) and a Slurm hostfile line carry
// as one host: a name of letters, digits, '.', '-' and '_', not starting with '-' (which
// either reader would take for something else: a space ends the field, '=' and newlines
// break the line, a leading '-' reads as an option).
bool is_launcher_host_name(std::string_view host) {
  if (host.empty() || host.front() == '-') return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_';
  });
}

void require_hosts(const Cluster& cluster, std::string_view what) {
  if (cluster.hosts.empty()) {
    throw ConfigError(
        fmt::format("{} needs host names: give the cluster's nodes as host names (nodes = [\"gpu01\", "
                    "...]) or use --slurm-topology with --nodelist",
                    what));
  }
  for (std::size_t node = 0; node < cluster.hosts.size(); ++node) {
    if (!is_launcher_host_name(cluster.hosts[node])) {
      throw ConfigError(fmt::format(
          "{} cannot name node {}'s host '{}': a host name in a launcher's file is letters, digits, '.', '-' and "
          "'_', not starting with '-'",
          what, node, printable_excerpt(cluster.hosts[node], 64)));
    }
  }
}

}  // namespace

std::string placement_text(const Layout& layout, const Cluster& cluster, const PlacementResult& result) {
  std::string levels = fmt::format("node (cost {})", number(cluster.node_cost));
  for (const ClusterLevel& level : cluster.levels) {
    levels += fmt::format(", {} ({} nodes, cost {})", level.name, level.nodes, number(level.cost));
  }
  std::string out = fmt::format("pgroups place: {} on {} nodes of {} GPUs; levels {}\n", layout.summary(),
                                cluster.node_count, cluster.gpus_per_node, levels);
  out += result.best_is_identity
             ? std::string("placement: the plain mesh order (no placement of the family costs less)\n")
             : fmt::format("placement: {}\n", pgroups::placement_text(layout, cluster, result.best));
  const double saved = result.identity.cost > 0 ? 100.0 * (1.0 - result.best.cost / result.identity.cost) : 0.0;
  out += fmt::format("cost {} (identity {}, {:.1f}% less); {} search steps\n\n", number(result.best.cost),
                     number(result.identity.cost), saved, result.steps);
  table(out, result, result.best);
  out += "\nidentity (plain mesh order):\n";
  table(out, result, result.identity);
  if (!result.unused_traffic.empty()) {
    out += fmt::format("\nnote: the cluster's traffic names {} {}, which this plan does not build (not used)\n",
                       result.unused_traffic.size() == 1 ? "kind" : "kinds", fmt::join(result.unused_traffic, ", "));
  }
  return out;
}

nlohmann::json placement_json(const Layout& layout, const Cluster& cluster, const PlacementResult& result) {
  if (layout.world_size() > kMaxJsonWorldSize) {
    throw ConfigError(
        fmt::format("world size {} is too large for --format json (at most {} ranks are enumerated); "
                    "use the text output, which gives the placement in closed form",
                    layout.world_size(), kMaxJsonWorldSize));
  }
  nlohmann::json traffic = nlohmann::json::object();
  for (const KindCost& kind : result.best.kinds) traffic[kind.name] = kind.traffic;
  nlohmann::json level_costs = nlohmann::json::object();
  for (std::size_t l = 0; l < result.levels.size(); ++l) level_costs[result.levels[l]] = result.level_costs[l];
  return {{"rank_map", placement_rank_map(layout, cluster, result.best)},
          {"cost", result.best.cost},
          {"identity_cost", result.identity.cost},
          {"levels", result.levels},
          {"traffic", std::move(traffic)},
          {"level_costs", std::move(level_costs)},
          {"crossing", crossing_json(result, result.best)},
          {"identity_crossing", crossing_json(result, result.identity)},
          {"placement", pgroups::placement_text(layout, cluster, result.best)},
          {"steps", result.steps},
          {"unused_traffic", result.unused_traffic},
          {"config", config_json(layout)}};
}

std::string openmpi_rankfile(const Cluster& cluster, const std::vector<std::int64_t>& rank_map) {
  require_hosts(cluster, "--rankfile");
  std::string out;
  for (std::size_t r = 0; r < rank_map.size(); ++r) {
    out += fmt::format("rank {}={} slot={}\n", r, host_of(cluster, rank_map[r]), rank_map[r] % cluster.gpus_per_node);
  }
  return out;
}

std::string slurm_hostfile(const Cluster& cluster, const std::vector<std::int64_t>& rank_map) {
  require_hosts(cluster, "--hostfile");
  std::string out;
  for (const std::int64_t launcher : rank_map) out += host_of(cluster, launcher) + "\n";
  return out;
}

}  // namespace pgroups::report
