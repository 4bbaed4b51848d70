#pragma once
/// \file
/// Placement: where each mesh coordinate runs on a Cluster, and what it costs
/// (docs/using/placement.md).
///
/// The cost of a rank map: Σ over kinds k of traffic(k) × Σ over k's groups × Σ over levels
/// ℓ (the node first) of cost(ℓ) × (the number of units of ℓ the group spans − 1).
///
/// The placements searched are those a user writes by hand: the mesh's dimensions in any
/// order, each split into factors across the levels. Such a placement is fixed, for the
/// cost, by how much of each dimension lies inside each level's unit (`within`); a group of
/// a kind then spans Π over its dimensions of size / within units of that level, the same
/// number for all its groups, so the cost of a placement is closed-form in O(levels × kinds
/// × dimensions) and no group is enumerated. Every dimension's factors run low digit first,
/// so each one-dimension kind keeps its order (pgroups/layout/rank_map.hpp).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "pgroups/layout/cluster.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups {

/// One kind's share of a placement's cost.
struct KindCost {
  std::string name;
  std::int64_t group_size = 1;
  std::int64_t groups = 0;
  double traffic = 0;
  /// Per level (the node first): how many of the kind's groups span more than one unit.
  std::vector<std::int64_t> crossing;
  /// Per level: the units one group spans (the same for all, in closed form), or 0 when
  /// the groups differ (counted by enumeration).
  std::vector<std::int64_t> units;
  double cost = 0;
};

struct PlacementCost {
  /// within[ℓ][d]: how many coordinates of mesh dimension d lie inside one unit of level ℓ
  /// (the node first); empty when the placement is not of that form (an identity whose
  /// levels cut a dimension unevenly, costed by enumeration).
  std::vector<std::vector<std::int64_t>> within;
  std::vector<KindCost> kinds;
  double cost = 0;
};

struct PlacementResult {
  /// "node", then the cluster's levels.
  std::vector<std::string> levels;
  std::vector<double> level_costs;
  PlacementCost best;
  PlacementCost identity;
  /// Whether `best` is the identity (no placement of the family costs less).
  bool best_is_identity = false;
  /// Candidate states the search evaluated: bounded whatever the world's size.
  std::int64_t steps = 0;
  /// The cluster's traffic entries for kinds the plan does not build, as the cluster names
  /// them: a cluster's description serves every job on it, so they are reported, not refused.
  std::vector<std::string> unused_traffic;
};

/// The most candidate states the search keeps per level; below it, the search is exhaustive
/// over the family.
inline constexpr std::size_t kPlacementCandidatesPerLevel = 4096;

/// The world size up to which a placement outside the closed form (an identity whose levels
/// cut a dimension unevenly) is costed by enumerating groups.
inline constexpr std::int64_t kPlacementEnumerationLimit = std::int64_t{1} << 22;

/// The cluster with one job's own traffic (`pgroups place --traffic tp=8,dp=1`) over the
/// cluster's: each entry replaces the cluster's entry for its kind, or is added. Unlike the
/// cluster's traffic, which describes every job on the cluster, the job's names its own plan:
/// ConfigError for a kind `layout` does not build, naming it and the plan's kinds.
/// O(entries × (kinds + the cluster's entries)).
[[nodiscard]] Cluster with_job_traffic(Cluster cluster, const Layout& layout,
                                       std::span<const std::pair<std::string, double>> job_traffic);

/// The cheapest placement of the family for a mesh layout without a rank map, and the
/// identity's cost. ConfigError for a preset layout, a layout with a rank map, a world other
/// than the cluster's GPUs (naming both), an invalid cluster, and an identity that is not of
/// the closed form on a world above kPlacementEnumerationLimit. Never costlier than the
/// identity; with a node order that is not the launch order, only candidates whose rank
/// map passes Layout's check are proposed. Bounded: at most kPlacementCandidatesPerLevel
/// states per level are kept, each costed in O(kinds × dimensions).
[[nodiscard]] PlacementResult place(const Layout& layout, const Cluster& cluster);

/// The rank map of a placement (entry r: the launcher rank of mesh rank r), composed with
/// the cluster's node order; the identity's when `within` is empty. O(world × dimensions).
[[nodiscard]] std::vector<std::int64_t> placement_rank_map(const Layout& layout, const Cluster& cluster,
                                                           const PlacementCost& placement);

/// The cost of any rank map over the cluster, by enumerating every group: the reference
/// the closed form is tested against. `layout` must carry the map. O(world × kinds × levels).
[[nodiscard]] PlacementCost cost_by_enumeration(const Layout& layout, const Cluster& cluster);

/// The placement in closed form, slowest level last: "node: tp 4 | nvl72: tp 2 x dp 9 |
/// rest: dp 2 x pp 4" (each level's share of each dimension, in mesh order).
[[nodiscard]] std::string placement_text(const Layout& layout, const Cluster& cluster, const PlacementCost& placement);

}  // namespace pgroups
