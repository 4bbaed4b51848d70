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
};

/// The levels of `pattern`'s "switch" parts, from `address_of_rank` (every rank's
/// SLURM_TOPOLOGY_ADDR, by global rank): a group is within a switch of depth d when its
/// ranks' addresses share their first d + 1 parts. Empty when a rank has no address, an
/// address has another number of parts than the pattern, or the pattern names no switch
/// (then there is nothing to count). O(W x parts + kinds x W).
[[nodiscard]] std::vector<SwitchLevelLocality> switch_locality(const Layout& layout,
                                                               const std::vector<std::string>& address_of_rank,
                                                               const std::string& pattern);

/// [{"depth", "switches", "kinds": [{"kind", "size", "within", "across"}]}], by depth.
[[nodiscard]] nlohmann::json switch_locality_json(const std::vector<SwitchLevelLocality>& levels);

/// "switches (SLURM_TOPOLOGY_ADDR): ..." and a table per level; empty for no levels.
[[nodiscard]] std::string switch_locality_text(const std::vector<SwitchLevelLocality>& levels);

/// One sentence per bandwidth-hungry kind (tensor traffic) whose groups cross a switch.
[[nodiscard]] std::vector<std::string> switch_locality_warnings(const std::vector<SwitchLevelLocality>& levels);

}  // namespace pgroups::report
