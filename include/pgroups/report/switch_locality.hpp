#pragma once
/// \file
/// The switch tree of a running job, as Slurm tells every task (SLURM_TOPOLOGY_ADDR
/// "spine.leaf1.node1", SLURM_TOPOLOGY_ADDR_PATTERN "switch.switch.node"; read by
/// detect_launcher, pgroups/launch/launcher.hpp): per switch level, from the top, how many
/// of each kind's groups stay under one switch of that level and how many cross switches,
/// as `place` counts the levels of a cluster file. What `verify`'s node report shows
/// beside the nodes. Pure.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/locality.hpp"

namespace pgroups::report {

/// One switch level: its depth from the top (0: the root's level), how many switches of
/// it the job's ranks sit under, and each kind's groups within one of them and across.
struct SwitchLevelLocality {
  std::size_t depth = 0;
  std::int64_t switches = 0;
  std::vector<KindLocality> kinds;  ///< groups_within_node: within one switch of the level
  /// Ranks whose path ends above this level (an unbalanced tree): each counts as under
  /// its own lowest switch, so that its groups with ranks under other switches cross.
  std::int64_t ranks_above = 0;
};

/// The levels of `pattern`'s "switch" parts, from `address_of_rank` (every rank's
/// SLURM_TOPOLOGY_ADDR, by global rank): a group is within a switch of depth d when its
/// ranks' addresses share their first d + 1 switches. Where the pattern is switches then
/// the node (Slurm's), each address is read by its own length, so that an unbalanced tree
/// (nodes at different depths) is counted down to its deepest level, a shallower node
/// counting as under its own lowest switch; for another pattern an address of another
/// length leaves nothing to count. Empty when a rank has no address or no rank is under a
/// switch. O(W x parts + kinds x W) per level.
[[nodiscard]] std::vector<SwitchLevelLocality> switch_locality(const Layout& layout,
                                                               const std::vector<std::string>& address_of_rank,
                                                               const std::string& pattern);

/// [{"depth", "switches", "ranks_above", "kinds": [{"kind", "size", "within", "across"}]}], by depth.
[[nodiscard]] nlohmann::json switch_locality_json(const std::vector<SwitchLevelLocality>& levels);

/// "switches (SLURM_TOPOLOGY_ADDR): ..." and a table per level; empty for no levels.
[[nodiscard]] std::string switch_locality_text(const std::vector<SwitchLevelLocality>& levels);

/// One sentence per bandwidth-hungry kind (tensor traffic) whose groups cross a switch.
[[nodiscard]] std::vector<std::string> switch_locality_warnings(const std::vector<SwitchLevelLocality>& levels);

}  // namespace pgroups::report
