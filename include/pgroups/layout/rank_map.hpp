#pragma once
/// \file
/// RankMap: where each mesh rank runs. Entry r is the launcher rank (the rank MPI, torchrun
/// or srun gave the process) that runs mesh rank r, so that a placement chosen for the
/// cluster (`pgroups place`) takes effect under a launcher that fixes ranks by node.
///
/// Every answer of a Layout built with a map is in launcher ranks: a group is the launcher
/// ranks of the mesh ranks it holds, ascending, and a rank's local rank is its position
/// there, as torch and MPI number a group. That is only the mesh coordinate when the map
/// keeps the order of each one-dimension kind, which Layout checks (check_rank_map_order):
/// the pipeline stage, a DeviceMesh coordinate or a shard index must agree with the group
/// rank the communication library gives.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pgroups {

class RankMap {
 public:
  /// The identity: mesh rank r runs on launcher rank r.
  RankMap() = default;
  /// Checks that `to_launcher` is a permutation of [0, world_size) and inverts it; throws
  /// ConfigError naming the first entry out of range, the first duplicate (with both
  /// positions) or, for a wrong length, both lengths and the first missing rank. An empty
  /// vector or the identity permutation is the identity map. O(world_size).
  RankMap(std::vector<std::int64_t> to_launcher, std::int64_t world_size);

  /// True when no rank moves (also for a map given as the identity permutation).
  [[nodiscard]] bool identity() const noexcept { return to_launcher_.empty(); }
  /// The launcher rank running mesh rank `mesh_rank`; O(1), no range check (Layout checks).
  [[nodiscard]] std::int64_t launcher_rank(std::int64_t mesh_rank) const noexcept {
    return to_launcher_.empty() ? mesh_rank : to_launcher_[static_cast<std::size_t>(mesh_rank)];
  }
  /// The mesh rank run by launcher rank `launcher`; O(1), no range check.
  [[nodiscard]] std::int64_t mesh_rank(std::int64_t launcher) const noexcept {
    return to_mesh_.empty() ? launcher : to_mesh_[static_cast<std::size_t>(launcher)];
  }
  /// The entries (empty for the identity).
  [[nodiscard]] std::span<const std::int64_t> entries() const noexcept { return to_launcher_; }
  /// A 64-bit digest of the entries (0 for the identity), which partition keys carry so that
  /// kinds of layouts under different maps are not taken for the same partition.
  [[nodiscard]] std::uint64_t fingerprint() const noexcept { return fingerprint_; }

  friend bool operator==(const RankMap& a, const RankMap& b) { return a.to_launcher_ == b.to_launcher_; }

 private:
  std::vector<std::int64_t> to_launcher_;
  std::vector<std::int64_t> to_mesh_;
  std::uint64_t fingerprint_ = 0;
};

/// Whether `map` is empty or the identity permutation; O(size).
/// What every reader of a rank map (a configuration file, a rank map file, the overrides of
/// the CLI and of Python) says of an empty one given outright, after naming it: an empty map
/// is refused, never read as no map.
inline constexpr std::string_view kEmptyRankMap =
    "is empty: a rank map lists the launcher rank of every mesh rank; leave it out where mesh rank r runs on "
    "launcher rank r";

[[nodiscard]] bool is_identity_map(std::span<const std::int64_t> map) noexcept;

/// "[3, 0, 1, 2]", cut after `limit` entries ("[3, 0, 1, ... 1021 more]") for messages.
[[nodiscard]] std::string rank_list_excerpt(std::span<const std::int64_t> ranks, std::size_t limit = 16);

}  // namespace pgroups
