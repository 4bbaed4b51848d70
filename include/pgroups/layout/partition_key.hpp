#pragma once
/// \file
/// PartitionKey: what decides the groups of a kind, in a form that does not depend on the
/// notation that made them. Two kinds (of one Layout, or of two Layouts of the same world)
/// have the same groups, each in the same ascending order, exactly when their keys are equal:
/// a preset's legacy sequence_dp blocks (on its block mesh) equal tensor's or model's groups
/// when they are the same ranks, and Megatron's embd at pp = 2 (the first and last rank of each
/// pipeline group, i.e. all of it) equals the pipeline kind.
///
/// Why that holds: every group of a full kind is a translate of the group holding rank 0, a
/// sum of runs c * stride with 0 <= c < extent, where a run is a maximal stretch of adjacent
/// varying mesh dimensions of more than one rank (their strides chain, so they read as one
/// dimension of the product's size); dimensions of one rank change nothing. The translates
/// of one set that tile [0, W) are fixed by the set, so (W, runs) names the partition, and
/// different runs give different rank-0 groups. A partial kind keeps the runs of the groups
/// it picks from and what it picks; when it picks every member (embd of two stages, or a
/// one-rank group) it is the full kind of those runs.

#include <compare>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pgroups/layout/mesh.hpp"

namespace pgroups {

struct PartitionKey {
  /// Which members of each underlying group a kind keeps (Megatron's embd, pos_embd).
  enum class Pick : std::uint8_t { all, first, first_and_last };

  std::int64_t world_size = 0;
  /// (stride, extent) of each run, fastest first; empty for groups of one rank.
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  Pick pick = Pick::all;
  /// The fingerprint of the layout's rank map (RankMap::fingerprint, 0 for none): the same
  /// runs under different maps are different groups of launcher ranks.
  std::uint64_t rank_map = 0;

  /// Whether every rank is in one group of the kind.
  [[nodiscard]] bool full() const noexcept { return pick == Pick::all; }
  /// Whether the kind's one group is the whole world.
  [[nodiscard]] bool is_world() const noexcept {
    return full() && (world_size == 1 ||
                      (runs.size() == 1 && runs.front() == std::pair<std::int64_t, std::int64_t>{1, world_size}));
  }
  /// "W=8 runs=1x4 all": for messages and Python's repr.
  [[nodiscard]] std::string text() const;

  friend auto operator<=>(const PartitionKey&, const PartitionKey&) = default;
  friend bool operator==(const PartitionKey&, const PartitionKey&) = default;
};

/// The key of the groups varying `varying` on `mesh` (its size is the world), of which a kind
/// keeps `pick`: a pick that keeps every member of groups of one or two ranks is `all`.
/// O(dimensions).
[[nodiscard]] PartitionKey partition_key_of(const Mesh& mesh, DimMask varying,
                                            PartitionKey::Pick pick = PartitionKey::Pick::all);

}  // namespace pgroups
