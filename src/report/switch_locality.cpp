#include "pgroups/report/switch_locality.hpp"

#include <fmt/format.h>

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
  std::vector<std::vector<std::string_view>> addresses;
  for (const std::string& address : address_of_rank) {
    addresses.push_back(parts_of(address));
    if (address.empty() || addresses.back().size() != kinds_of_part.size()) return {};
  }
  std::vector<SwitchLevelLocality> levels;
  for (std::size_t depth = 0; depth < kinds_of_part.size(); ++depth) {
    if (kinds_of_part[depth] != "switch") continue;
    // A switch of this depth is named by the address's first depth + 1 parts.
    std::map<std::string, std::int64_t> switch_ids;
    std::vector<std::int64_t> switch_of_rank;
    for (const auto& parts : addresses) {
      std::string prefix;
      for (std::size_t i = 0; i <= depth; ++i) prefix += fmt::format("{}.", parts[i]);
      switch_of_rank.push_back(switch_ids.emplace(prefix, static_cast<std::int64_t>(switch_ids.size())).first->second);
    }
    levels.push_back({depth, static_cast<std::int64_t>(switch_ids.size()),
                      kind_locality(layout, NodeMap::observed(switch_of_rank))});
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
    json.push_back({{"depth", level.depth}, {"switches", level.switches}, {"kinds", kinds}});
  }
  return json;
}

std::string switch_locality_text(const std::vector<SwitchLevelLocality>& levels) {
  if (levels.empty()) return {};
  std::string out = "switches (SLURM_TOPOLOGY_ADDR), from the top:\n";
  for (const SwitchLevelLocality& level : levels) {
    out += fmt::format("level {}: {} switch{}\n", level.depth, level.switches, level.switches == 1 ? "" : "es");
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
