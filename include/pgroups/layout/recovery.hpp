#pragma once
/// \file
/// Recovery: the layout a job's survivors run after it lost ranks, or after new ranks
/// joined it. Pure layout math, computed without enumerating the world.
///
/// Every dimension but one keeps its size. The shrinking dimension (a mesh's `dp` unless
/// another is named; a preset's `data`) loses whole replicas, a replica being the ranks
/// that share one coordinate of it. A replica that lost a rank is dropped and its healthy
/// ranks become spares; every surviving replica keeps its ranks, so its processes, nodes
/// and weights stay where they are. Joining ranks (ids at or past the old world size, as a
/// launcher numbers new processes) fill whole new replicas appended to the dimension;
/// joiners left over are spares.
///
/// The rank map says which old (launcher) rank runs each new rank: entry r of rank_map()
/// is the old rank of new rank r. It is monotone over the surviving replicas, so a new
/// group of a kind that does not vary the shrinking dimension, mapped through it, is
/// exactly an old group, members in the same order; a kind that varies it keeps the old
/// group's surviving members (and gains the joiners of new replicas).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_config.hpp"

namespace pgroups {

/// What happened to a job: the ranks it lost and the ranks that join it.
struct RecoveryRequest {
  /// Old ranks whose processes are gone, each in [0, W), no duplicates, any order.
  std::vector<std::int64_t> lost;
  /// New processes, each named by an id at or past W (a launcher gives them W, W+1, ...),
  /// no duplicates, any order.
  std::vector<std::int64_t> joining;
  /// The shrinking dimension: a mesh dimension's name, or for a preset `data` (also `dp`),
  /// `pipe` (`pp`) or, in modes none, 1d and sequence, `tensor` (`tp`). Empty: `dp` for a
  /// mesh, `data` for a preset.
  std::string shrink;
};

/// The most ranks a list of lost or alive ranks may name or imply.
inline constexpr std::int64_t kMaxListedRanks = std::int64_t{1} << 22;

/// The request given by the ranks that are alive: old ranks of [0, W) missing from
/// `alive` are lost, ids at or past W join. ConfigError for a negative id, a duplicate,
/// naming it, or more than kMaxListedRanks lost. O(|alive| log |alive| + |lost|).
[[nodiscard]] RecoveryRequest recovery_request_from_alive(std::int64_t world_size, std::span<const std::int64_t> alive,
                                                          std::string shrink = {});

/// What an old rank (or a joining id) does after the recovery.
enum class RankFate : std::uint8_t { active, spare, lost };

/// "active", "spare" or "lost".
[[nodiscard]] std::string_view rank_fate_name(RankFate fate);

class Recovery {
 public:
  /// Computes the recovery of `old_layout`. Throws ConfigError naming the value and the
  /// rule for a lost rank outside [0, W), a joining id below W, a negative id, a
  /// duplicate (within or across the lists), a shrinking dimension the layout does not
  /// have (naming the ones it has), the tensor of a 2d/2.5d/3d preset (no single
  /// dimension), and, when no replica survives and no new one is filled, naming the
  /// replicas and the lost rank that dropped each (the first few of a long list).
  /// O((|lost| + |joining|) * (dimensions + log)), whatever the world size.
  Recovery(const Layout& old_layout, RecoveryRequest request);

  [[nodiscard]] const Layout& old_layout() const noexcept { return old_; }
  /// The layout the survivors run: the old configuration with the shrinking dimension's
  /// new size (for a preset the world size, pipeline or tensor size it implies), and no
  /// gpus_per_node: the survivors stay on their old nodes, no consecutive blocks of new ranks.
  [[nodiscard]] const Layout& layout() const noexcept { return new_; }
  /// The shrinking dimension's name in the layouts' mesh (`data` for a preset's `dp`).
  [[nodiscard]] const std::string& shrink_dim() const noexcept { return shrink_name_; }
  /// The number of ranks of one replica: W / size of the shrinking dimension.
  [[nodiscard]] std::int64_t replica_size() const noexcept { return replica_size_; }
  /// The shrinking dimension's coordinates of the dropped replicas, ascending.
  [[nodiscard]] std::span<const std::int64_t> dropped_replicas() const noexcept { return dropped_; }
  /// The number of replicas appended, filled by joining ranks.
  [[nodiscard]] std::int64_t added_replicas() const noexcept { return added_; }
  /// The lost ranks, ascending.
  [[nodiscard]] std::span<const std::int64_t> lost() const noexcept { return lost_; }
  /// The joining ids, ascending; the first added_replicas() * replica_size() run new
  /// ranks, the rest are spares.
  [[nodiscard]] std::span<const std::int64_t> joining() const noexcept { return joining_; }
  /// The number of spares: healthy ranks of dropped replicas plus leftover joiners. O(1).
  [[nodiscard]] std::int64_t spare_count() const noexcept;
  /// Every spare, ascending. O(spare_count() + |lost|): bound it before calling at scale.
  [[nodiscard]] std::vector<std::int64_t> spares() const;
  /// The old rank at `index` of the dropped replica whose coordinate is `coordinate`.
  /// O(dimensions). ConfigError for a coordinate or index out of range.
  [[nodiscard]] std::int64_t replica_member(std::int64_t coordinate, std::int64_t index) const;

  /// The surviving old ranks whose new rank differs from their old one (their shrinking
  /// coordinate or the stride of a slower dimension changed). O(1).
  [[nodiscard]] std::int64_t renumbered_count() const noexcept;

  /// The old rank (or joining id) that runs `new_rank`. ConfigError for a rank outside
  /// the new world. O(dimensions + log |lost|).
  [[nodiscard]] std::int64_t old_rank(std::int64_t new_rank) const;
  /// The new rank that `old_rank` (or a joining id) runs, or nothing for a spare or a lost
  /// rank. ConfigError for an id that is neither an old rank nor a joining id.
  /// O(dimensions + log(|lost| + |joining|)).
  [[nodiscard]] std::optional<std::int64_t> new_rank(std::int64_t old_rank) const;
  /// What `old_rank` (or a joining id) does; ConfigError like new_rank.
  [[nodiscard]] RankFate fate(std::int64_t old_rank) const;
  /// Every entry of the rank map: element r is old_rank(r). O(new W * dimensions): bound
  /// the new world before calling at scale.
  [[nodiscard]] std::vector<std::int64_t> rank_map() const;

 private:
  [[nodiscard]] bool is_dropped(std::int64_t coordinate) const;

  struct Parts;
  [[nodiscard]] static Parts compute_parts(const Layout& old_layout, RecoveryRequest request);
  Recovery(const Layout& old_layout, Parts parts);

  Layout old_;
  std::size_t shrink_ = 0;
  std::string shrink_name_;
  std::int64_t replica_size_ = 1;
  std::int64_t surviving_ = 0;
  std::int64_t added_ = 0;
  std::vector<std::int64_t> lost_;
  std::vector<std::int64_t> joining_;
  std::vector<std::int64_t> dropped_;
  /// dropped_[j] - j, nondecreasing: how many dropped coordinates come before the c-th
  /// surviving one is a binary search in it.
  std::vector<std::int64_t> dropped_shifted_;
  Layout new_;
};

}  // namespace pgroups
