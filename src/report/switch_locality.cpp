#include "pgroups/report/switch_locality.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>

namespace pgroups::report {
namespace {

std::vector<std::string_view> parts_of(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t dot = text.find('.'); dot != std::string_view::npos; dot = text.find('.', start)) {
    parts.push_back(text.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

std::vector<SwitchLevelLocality> switch_locality(const Layout& layout, const std::vector<std::string>& address_of_rank,
                                                 const std::string& pattern) {
  const std::vector<std::string_view> kinds_of_part = parts_of(pattern);
  if (static_cast<std::int64_t>(address_of_rank.size()) != layout.world_size()) return {};
  // Slurm's usual pattern, switches from the top and then the node, holds on every node
  // even where the tree is unbalanced and a node's path is shorter than another's (its
  // pattern then has fewer switches than rank 0's): each address is read by its own length.
  const bool switches_then_node =
      kinds_of_part.back() == "node" && std::all_of(kinds_of_part.begin(), kinds_of_part.end() - 1,
                                                    [](std::string_view kind) { return kind == "switch"; });
  // Each rank's switches, from the top.
  std::vector<std::vector<std::string_view>> switches_of_rank;
  std::size_t deepest = 0;
  for (const std::string& address : address_of_rank) {
    if (address.empty()) return {};
    const std::vector<std::string_view> parts = parts_of(address);
    std::vector<std::string_view> switches;
    if (switches_then_node) {
      switches.assign(parts.begin(), parts.end() - 1);
    } else {
      if (parts.size() != kinds_of_part.size()) return {};
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (kinds_of_part[i] == "switch") switches.push_back(parts[i]);
      }
    }
    deepest = std::max(deepest, switches.size());
    switches_of_rank.push_back(std::move(switches));
  }
  std::vector<SwitchLevelLocality> levels;
  for (std::size_t depth = 0; depth < deepest; ++depth) {
    // A switch of this depth is named by the rank's first depth + 1 switches. A rank whose
    // path ends above this depth counts as under its own lowest switch (its traffic to
    // any other switch crosses the tree); one under no switch at all, under itself.
    std::map<std::string, std::int64_t> switch_ids;
    std::vector<std::int64_t> switch_of_rank;
    std::int64_t shallow = 0;
    for (std::size_t rank = 0; rank < switches_of_rank.size(); ++rank) {
      const std::vector<std::string_view>& switches = switches_of_rank[rank];
      if (switches.size() <= depth) ++shallow;
      std::string prefix = switches.empty() ? fmt::format("rank {}", address_of_rank[rank]) : std::string();
      for (std::size_t i = 0; i < std::min(depth + 1, switches.size()); ++i) prefix += fmt::format("{}.", switches[i]);
      switch_of_rank.push_back(switch_ids.emplace(prefix, static_cast<std::int64_t>(switch_ids.size())).first->second);
    }
    levels.push_back({depth, static_cast<std::int64_t>(switch_ids.size()),
                      kind_locality(layout, NodeMap::observed(switch_of_rank)), shallow});
  }
  return levels;
}

nlohmann::json switch_locality_json(const std::vector<SwitchLevelLocality>& levels) {
  nlohmann::json json = nlohmann::json::array();
  for (const SwitchLevelLocality& level : levels) {
    nlohmann::json kinds = nlohmann::json::array();
    for (const KindLocality& kind : level.kinds) {
      kinds.push_back({{"kind", kind.name},
                       {"size", kind.group_size},
                       {"within", kind.groups_within_node},
                       {"across", kind.groups_across_nodes}});
    }
    json.push_back(
        {{"depth", level.depth}, {"switches", level.switches}, {"ranks_above", level.ranks_above}, {"kinds", kinds}});
  }
  return json;
}

std::string switch_locality_text(const std::vector<SwitchLevelLocality>& levels) {
  if (levels.empty()) return {};
  std::string out = "switches (SLURM_TOPOLOGY_ADDR), from the top:\n";
  for (const SwitchLevelLocality& level : levels) {
    out += fmt::format("level {}: {} switch{}", level.depth, level.switches, level.switches == 1 ? "" : "es");
    if (level.ranks_above > 0) {
      out += fmt::format(
          " ({} rank{} hang{} from a switch above this level, each counted under it: the tree is "
          "unbalanced)",
          level.ranks_above, level.ranks_above == 1 ? "" : "s", level.ranks_above == 1 ? "s" : "");
    }
    out += '\n';
    out += fmt::format("{:<20} {:>10} {:>14} {:>15}\n", "kind", "size", "within switch", "across switches");
    for (const KindLocality& kind : level.kinds) {
      out += fmt::format("{:<20} {:>10} {:>14} {:>15}\n", kind.name, kind.group_size, kind.groups_within_node,
                         kind.groups_across_nodes);
    }
  }
  return out;
}

std::vector<std::string> switch_locality_warnings(const std::vector<SwitchLevelLocality>& levels) {
  std::vector<std::string> warnings;
  for (const SwitchLevelLocality& level : levels) {
    for (const KindLocality& kind : level.kinds) {
      if (!kind.bandwidth_hungry || kind.groups_across_nodes == 0) continue;
      warnings.push_back(fmt::format(
          "{} groups cross switches of level {}: {} of {} groups span more than one switch, so tensor-parallel "
          "traffic crosses the switch tree; list tp first in --mesh, or place the job (pgroups place "
          "--slurm-topology)",
          kind.name, level.depth, kind.groups_across_nodes, kind.groups_within_node + kind.groups_across_nodes));
    }
  }
  return warnings;
}

}  // namespace pgroups::report
