#include "pgroups/cost/nccl_memory.hpp"

#include <cstddef>
#include <optional>
#include <vector>

#include "pgroups/layout/communicator_sharing.hpp"

namespace pgroups {

NcclEstimate estimate_nccl_memory(const Layout& layout, std::int64_t rank, bool share, const NcclMemoryModel& model) {
  const std::vector<std::size_t> created = created_kinds(layout, rank, share);
  const std::optional<std::int64_t> per_node = layout.config().gpus_per_node;
  auto node = [&per_node](std::int64_t r) { return per_node && *per_node > 0 ? r / *per_node : 0; };
  NcclEstimate estimate;
  // The bill's created: the NCCL world (the duplicate of the world) and each split.
  estimate.communicators = 1 + static_cast<std::int64_t>(created.size());
  auto add = [&](std::int64_t size, bool intra) {
    double mib = size <= 1 ? model.one_rank_mib : size == 2 ? model.two_ranks_mib : model.larger_mib;
    if (!intra) mib += model.inter_node_extra_mib;
    estimate.mib += mib;
    ++(intra ? estimate.intra_node : estimate.inter_node);
  };
  // The NCCL world: within a node when the whole world fits in one.
  add(layout.world_size(), node(0) == node(layout.world_size() - 1));
  for (const std::size_t kind : created) {
    // Nodes are consecutive blocks of ranks and a group is ascending, so it stays in one
    // node exactly when its first and last members do: O(dimensions), not O(group size).
    const std::int64_t size = layout.group_size(kind);
    add(size, node(layout.group_member(rank, kind, 0)) == node(layout.group_member(rank, kind, size - 1)));
  }
  return estimate;
}

}  // namespace pgroups
