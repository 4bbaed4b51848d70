// RankView: one rank's answers about its groups, each read from the Layout in O(dimensions)
// (members in O(group size)); nothing here enumerates the world.
#include "pgroups/layout/rank_view.hpp"

#include <fmt/format.h>

#include "pgroups/common/error.hpp"
#include "world_rank.hpp"

namespace pgroups {

RankView::RankView(const Layout& layout, std::int64_t rank) : layout_(&layout), rank_(rank) {
  detail::check_world_rank(rank, layout.world_size());
}

bool RankView::is_member(std::size_t kind) const { return layout_->is_member(rank_, kind); }

void RankView::require_member(std::size_t kind) const {
  if (!is_member(kind)) {
    // Every front door's text (ParallelContext, pgroups.torch): the rank has no group to use.
    throw StateError(
        fmt::format("rank {} is in no group of kind {}: it is a partial kind, and this rank has no "
                    "communicator of it (ask is_member first)",
                    rank_, layout_->group_kinds()[kind].name));
  }
}

std::int64_t RankView::local_rank(std::size_t kind) const {
  require_member(kind);
  return layout_->local_rank(rank_, kind);
}

std::int64_t RankView::size(std::size_t kind) const {
  require_member(kind);
  return layout_->group_size(kind);
}

std::vector<std::int64_t> RankView::members(std::size_t kind) const {
  require_member(kind);
  return layout_->group_of(rank_, kind);
}

std::int64_t RankView::next_rank(std::size_t kind) const {
  const std::int64_t n = size(kind);
  return layout_->group_member(rank_, kind, (local_rank(kind) + 1) % n);
}

std::int64_t RankView::previous_rank(std::size_t kind) const {
  const std::int64_t n = size(kind);
  return layout_->group_member(rank_, kind, (local_rank(kind) + n - 1) % n);
}

std::int64_t RankView::first_rank(std::size_t kind) const {
  require_member(kind);
  return layout_->group_member(rank_, kind, 0);
}

std::int64_t RankView::last_rank(std::size_t kind) const { return layout_->group_member(rank_, kind, size(kind) - 1); }

std::int64_t RankView::seed(std::size_t kind) const { return layout_->seed(rank_, kind); }

std::int64_t RankView::group_index(std::size_t kind) const {
  require_member(kind);
  return layout_->group_index(rank_, kind);
}

std::vector<RankView::Dimension> RankView::dimensions() const {
  std::vector<Dimension> out;
  const auto dims = layout_->mesh().dims();
  for (std::size_t i = dims.size(); i-- > 0;) {
    std::string name = dims[i].name;
    for (const GroupKind& kind : layout_->group_kinds()) {
      if (!kind.partial && kind.dims.size() == 1 && kind.dims.front() == dims[i].name) {
        name = kind.name;
        break;
      }
    }
    out.push_back({std::move(name), dims[i].size});
  }
  return out;
}

std::optional<std::pair<std::size_t, std::size_t>> RankView::flattened_dims(std::size_t kind) const {
  const PartitionKey key = layout_->partition_key(kind);
  if (!key.full()) return std::nullopt;
  // A flattened dimension's coordinate is the mesh order; the group's ranks are the
  // ascending launcher ranks: under a map that reorders them they would disagree.
  if (!layout_->keeps_mesh_order(kind)) return std::nullopt;
  const Mesh& mesh = layout_->mesh();
  const std::size_t n = mesh.dims().size();
  // dimensions() is slowest first: its entries [first, last) are mesh dimensions
  // [n - last, n - first). The shortest run from the first start that matches.
  for (std::size_t first = 0; first < n; ++first) {
    DimMask mask = DimMask{1} << (n - 1 - first);
    for (std::size_t last = first + 2; last <= n; ++last) {
      mask |= DimMask{1} << (n - last);
      PartitionKey candidate = partition_key_of(mesh, mask);
      candidate.rank_map = key.rank_map;  // the same map moves both alike
      if (candidate == key) return std::pair{first, last};
    }
  }
  return std::nullopt;
}

}  // namespace pgroups
