#include "pgroups/creation_cost.hpp"

#include <algorithm>

namespace pgroups {

std::vector<CreationCost> creation_costs(const Layout& layout) {
  std::int64_t all_groups = 0;
  std::int64_t largest_group = 1;
  for (ParallelMode mode : layout.modes()) {
    if (mode == ParallelMode::global) continue;
    all_groups += layout.group_count(mode);
    largest_group = std::max(largest_group, layout.group_size(mode));
  }
  const auto k = static_cast<std::int64_t>(layout.modes().size());
  const std::int64_t w = layout.world_size();
  // Colossal-AI calls torch.distributed.new_group for every group, on every rank; with
  // NCCL it creates a gloo CPU group beside each device group, doubling the calls.
  return {
      {"colossal-ai (gloo)", "new_group", all_groups, all_groups, w},
      {"colossal-ai (nccl)", "new_group x2", 2 * all_groups, 2 * all_groups, w},
      {"per_group", "MPI_Comm_create", 1 + all_groups, 3 + all_groups, w},
      {"comm_split", "MPI_Comm_split", k, k + 2, w},
      {"comm_create", "MPI_Comm_create", k, k + 2, w},
      {"create_group", "MPI_Comm_create_group", k, k + 2, largest_group},
  };
}

}  // namespace pgroups
