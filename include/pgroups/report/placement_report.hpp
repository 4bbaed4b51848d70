#pragma once
/// \file
/// How `pgroups place` shows a placement (docs/using/placement.md): text with, per kind, how many
/// groups stay within each level and how many cross it, for the placement and for the plain
/// mesh order; JSON with the rank map; and the files launchers take (an Open MPI rankfile,
/// a Slurm hostfile for --distribution=arbitrary).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "pgroups/layout/cluster.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/placement.hpp"

namespace pgroups::report {

/// The text: a line on the mesh and the cluster, the placement in closed form (the
/// dimension order and splits), the costs, and a table per placement (the chosen one, the
/// identity): kind, size, groups, traffic, within/crossing per level, cost. O(kinds × levels).
[[nodiscard]] std::string placement_text(const Layout& layout, const Cluster& cluster, const PlacementResult& result);

/// The JSON: rank_map, cost, identity_cost, levels ("node" first), traffic (kind -> bytes),
/// level_costs (level -> cost), crossing and identity_crossing (kind -> level -> groups that
/// span more than one unit), placement (the closed form), steps, config. ConfigError above
/// kMaxJsonWorldSize ranks, as plan's JSON. O(world × dimensions).
[[nodiscard]] nlohmann::json placement_json(const Layout& layout, const Cluster& cluster,
                                            const PlacementResult& result);

/// An Open MPI rankfile ("rank R=HOST slot=S" per rank) that runs mesh rank R where the rank
/// map puts it; a Slurm hostfile (one host per task, in rank order) for srun
/// --distribution=arbitrary. ConfigError when the cluster has no host names. O(world).
[[nodiscard]] std::string openmpi_rankfile(const Cluster& cluster, const std::vector<std::int64_t>& rank_map);
[[nodiscard]] std::string slurm_hostfile(const Cluster& cluster, const std::vector<std::int64_t>& rank_map);

}  // namespace pgroups::report
