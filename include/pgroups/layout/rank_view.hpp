#pragma once
/// \file
/// RankView: everything one rank asks of its groups, answered from a Layout alone. The one
/// place those answers are made: ParallelContext answers through it, and Python binds it once
/// (pgroups.Plan.view) for pgroups.torch, pgroups.megatron and pgroups.colossal, which hold
/// only torch handles over it.
///
/// Each answer costs O(dimensions), members() O(group size): nothing enumerates the world, so
/// a view of any rank of a plan of 2^40 ranks answers at once. A rank that is in no group of a
/// partial kind (Megatron's embd, pos_embd) gets a StateError naming the kind and the rank from
/// local_rank, size, members and the neighbour and first/last queries; ask is_member first.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/partition_key.hpp"

namespace pgroups {

class RankView {
 public:
  /// The view of `rank` (ConfigError for a rank outside [0, world_size)). The layout must
  /// outlive the view.
  RankView(const Layout& layout, std::int64_t rank);

  [[nodiscard]] const Layout& layout() const noexcept { return *layout_; }
  [[nodiscard]] std::int64_t rank() const noexcept { return rank_; }

  /// A kind by name (Layout::group_kind_index: a mesh token in any dimension order; StateError
  /// naming the kinds for none) or by mode (Layout::kind_of).
  [[nodiscard]] std::size_t kind(std::string_view name) const { return layout_->group_kind_index(name); }
  [[nodiscard]] std::size_t kind(ParallelMode mode) const { return layout_->kind_of(mode); }

  /// Every query below takes a kind index (StateError when out of range).
  [[nodiscard]] bool is_member(std::size_t kind) const;
  /// Throws the non-member's StateError, naming the rank and the kind, unless is_member.
  void require_member(std::size_t kind) const;
  [[nodiscard]] std::int64_t local_rank(std::size_t kind) const;
  [[nodiscard]] std::int64_t size(std::size_t kind) const;
  /// The global ranks of this rank's group, ascending.
  [[nodiscard]] std::vector<std::int64_t> members(std::size_t kind) const;
  /// The group's member after (before) this rank, cyclically.
  [[nodiscard]] std::int64_t next_rank(std::size_t kind) const;
  [[nodiscard]] std::int64_t previous_rank(std::size_t kind) const;
  /// The group's first (last) member.
  [[nodiscard]] std::int64_t first_rank(std::size_t kind) const;
  [[nodiscard]] std::int64_t last_rank(std::size_t kind) const;
  [[nodiscard]] bool is_first(std::size_t kind) const { return local_rank(kind) == 0; }
  [[nodiscard]] bool is_last(std::size_t kind) const { return local_rank(kind) == size(kind) - 1; }
  /// The kind's seed (Layout::seed): answered for non-members too (the base seed).
  [[nodiscard]] std::int64_t seed(std::size_t kind) const;
  /// The position of this rank's group among the kind's groups (MPI_Comm_split's colour).
  [[nodiscard]] std::int64_t group_index(std::size_t kind) const;

  /// The rank's pipeline stage and the number of stages (1 when there is no pipeline).
  [[nodiscard]] std::int64_t pipeline_stage() const { return layout_->pipeline_stage(rank_); }
  [[nodiscard]] std::int64_t pipeline_stages() const noexcept { return layout_->pipeline_size(); }
  [[nodiscard]] bool is_pipeline_first_stage() const { return pipeline_stage() == 0; }
  [[nodiscard]] bool is_pipeline_last_stage() const { return pipeline_stage() == pipeline_stages() - 1; }

  /// The kind's partition key (partition_key.hpp); the same on every rank.
  [[nodiscard]] PartitionKey partition_key(std::size_t kind) const { return layout_->partition_key(kind); }

  /// The layout's dimensions as a DeviceMesh names them, slowest first: each named by the
  /// first full kind that varies it alone (a mesh token, a preset's "data", "2d_col"), or by
  /// itself where no kind does (a preset's "pipe" of one stage); with their sizes.
  struct Dimension {
    std::string name;
    std::int64_t size = 1;
  };
  [[nodiscard]] std::vector<Dimension> dimensions() const;
  /// When the kind's groups are the ranks varying a run of two or more adjacent entries of
  /// dimensions() (and nothing else), the first and one-past-last index of that run there:
  /// the kind is that run flattened. Empty for every other kind (a partial one, one of a
  /// single dimension, one of dimensions that are not adjacent, one whose groups a rank map
  /// runs out of mesh order: Layout::keeps_mesh_order). O(dimensions) without a rank map;
  /// O(world size x dimensions) with one.
  [[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> flattened_dims(std::size_t kind) const;

 private:
  const Layout* layout_;
  std::int64_t rank_;
};

}  // namespace pgroups
