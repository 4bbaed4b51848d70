#include "pgroups/report/locality_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "pgroups/report/elided_list.hpp"

namespace pgroups::report {

std::optional<LocalityReport> planned_locality(const Layout& layout) {
  const auto& gpus_per_node = layout.config().gpus_per_node;
  if (!gpus_per_node) return std::nullopt;
  return planned_locality(layout, *gpus_per_node);
}

LocalityReport planned_locality(const Layout& layout, std::int64_t gpus_per_node) {
  NodeMap nodes = NodeMap::blocks(layout.world_size(), gpus_per_node);
  if (layout.world_size() > kMaxLocalityWorldSize) return LocalityReport{std::move(nodes), {}, false};
  std::vector<KindLocality> modes = kind_locality(layout, nodes);
  return LocalityReport{std::move(nodes), std::move(modes), true};
}

LocalityReport observed_locality(const Layout& layout, const std::vector<std::int64_t>& node_of_rank) {
  NodeMap nodes = NodeMap::observed(node_of_rank);
  std::vector<KindLocality> modes = kind_locality(layout, nodes);
  return {std::move(nodes), std::move(modes), true};
}

namespace {
// G when every node holds the same number of ranks.
std::optional<std::int64_t> uniform_node_size(const NodeMap& nodes) {
  if (nodes.gpus_per_node()) return nodes.gpus_per_node();
  const std::vector<std::int64_t> counts = nodes.ranks_per_node();
  if (std::all_of(counts.begin(), counts.end(), [&](std::int64_t c) { return c == counts.front(); })) {
    return counts.front();
  }
  return std::nullopt;
}
}  // namespace

nlohmann::json locality_json(const LocalityReport& report) {
  nlohmann::json modes = nlohmann::json::object();
  for (const KindLocality& mode : report.modes) {
    modes[mode.name] = {{"groups_within_node", mode.groups_within_node},
                        {"groups_across_nodes", mode.groups_across_nodes}};
  }
  const auto uniform = uniform_node_size(report.nodes);
  nlohmann::json json = {{"gpus_per_node", uniform ? nlohmann::json(*uniform) : nlohmann::json()},
                         {"nodes", report.nodes.node_count()}};
  if (!report.nodes.gpus_per_node()) json["ranks_per_node"] = report.nodes.ranks_per_node();
  json["kinds"] = modes;
  json["modes"] = std::move(modes);
  return json;
}

std::string locality_text(const LocalityReport& report) {
  const NodeMap& nodes = report.nodes;
  std::string out;
  if (nodes.gpus_per_node()) {
    out = fmt::format("locality: {} node{} of {} GPUs (node n holds ranks n*{} to n*{}+{})\n", nodes.node_count(),
                      nodes.node_count() == 1 ? "" : "s", *nodes.gpus_per_node(), *nodes.gpus_per_node(),
                      *nodes.gpus_per_node(), *nodes.gpus_per_node() - 1);
  } else {
    const auto counts = nodes.ranks_per_node();
    const std::string per_node = elided_list(static_cast<std::int64_t>(counts.size()),
                                             [&](std::int64_t i) { return counts[static_cast<std::size_t>(i)]; });
    out = fmt::format("locality: {} node{}, ranks per node {}{}\n", nodes.node_count(),
                      nodes.node_count() == 1 ? "" : "s", per_node,
                      nodes.contiguous() ? "" : " (not in consecutive blocks)");
  }
  if (!report.counted) {
    return out + fmt::format("groups are not counted by node above {} ranks\n", kMaxLocalityWorldSize);
  }
  out += fmt::format("{:<20} {:>10} {:>12} {:>13}\n", "kind", "size", "within node", "across nodes");
  for (const KindLocality& mode : report.modes) {
    const bool flagged = mode.bandwidth_hungry && mode.groups_across_nodes > 0;
    out += fmt::format("{:<20} {:>10} {:>12} {:>13}{}\n", mode.name, mode.group_size, mode.groups_within_node,
                       mode.groups_across_nodes, flagged ? "  <- tensor traffic across nodes" : "");
  }
  return out;
}

std::vector<std::string> locality_report_warnings(const Layout& layout, const LocalityReport& report) {
  std::vector<KindLocality> modes = report.modes;
  std::vector<std::string> not_judged;
  if (!report.counted) {
    // Above the counting limit only closed forms judge, in bounded work: each
    // bandwidth-hungry kind whose groups are consecutive blocks (block_locality checks
    // it); any other one is said not to be judged rather than silently passed.
    modes.clear();
    const auto kinds = layout.group_kinds();
    for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
      if (!is_bandwidth_hungry(kinds[kind].name)) continue;
      if (auto entry = block_locality(layout, kind, *report.nodes.gpus_per_node())) {
        modes.push_back(std::move(*entry));
      } else {
        not_judged.push_back(kinds[kind].name);
      }
    }
  }
  std::vector<std::string> warnings = locality_warnings(layout, report.nodes, modes);
  for (const std::string& name : not_judged) {
    warnings.push_back(fmt::format(
        "{} groups are not judged by node: above {} ranks only groups of consecutive ranks are, and these are not",
        name, kMaxLocalityWorldSize));
  }
  return warnings;
}

std::string node_text(const NodeMap& nodes, std::int64_t rank) {
  return fmt::format("node {} of {}{}, local index {}", nodes.node_of(rank), nodes.node_count(),
                     nodes.gpus_per_node() ? fmt::format(" ({} GPUs per node)", *nodes.gpus_per_node()) : "",
                     nodes.local_index(rank));
}

nlohmann::json node_json(const NodeMap& nodes, std::int64_t rank) {
  nlohmann::json json = {
      {"node", nodes.node_of(rank)}, {"local_index", nodes.local_index(rank)}, {"nodes", nodes.node_count()}};
  if (nodes.gpus_per_node()) json["gpus_per_node"] = *nodes.gpus_per_node();
  return json;
}

namespace {
bool launcher_agrees(const LiveNodes& nodes) {
  for (std::size_t r = 0; r < nodes.local_rank_on_node.size(); ++r) {
    if (nodes.launcher_local_rank[r] != nodes.local_rank_on_node[r]) return false;
  }
  return true;
}
}  // namespace

nlohmann::json live_nodes_json(const LiveNodes& nodes, const LocalityReport& report) {
  nlohmann::json json = locality_json(report);
  std::vector<std::int64_t> renumbered;
  for (std::int64_t r = 0; r < report.nodes.world_size(); ++r) renumbered.push_back(report.nodes.node_of(r));
  json["launcher"] = launcher_name(nodes.launcher.launcher);
  json["hosts"] = nodes.hosts;
  json["node_of_rank"] = renumbered;
  json["local_rank_on_node"] = nodes.local_rank_on_node;
  json["launcher_local_rank"] = nodes.launcher_local_rank;
  json["launcher_agrees"] = launcher_agrees(nodes);
  return json;
}

std::string live_nodes_text(const LiveNodes& nodes, const LocalityReport& report) {
  std::string agreement;
  if (nodes.launcher.launcher == Launcher::none) {
    agreement = "no launcher variables";
  } else {
    agreement = fmt::format("launcher {}, whose local ranks {} {}", launcher_name(nodes.launcher.launcher),
                            launcher_agrees(nodes) ? "agree with" : "DIFFER from", nodes.local_rank_source);
  }
  return fmt::format("nodes: {} ({}); hosts {}\n", report.nodes.node_count(), agreement, fmt::join(nodes.hosts, ", ")) +
         locality_text(report);
}

}  // namespace pgroups::report
