#include "pgroups/creation_cost.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "pgroups/error.hpp"

namespace pgroups {

namespace {

// Every count is checked: a world near 2^63 ranks is a valid layout, but 19 modes of
// W groups each are not a 64-bit number.
std::int64_t checked(bool overflowed, std::int64_t value, std::int64_t w) {
  if (overflowed) {
    throw ConfigError(fmt::format("the creation cost of a world of {} ranks does not fit in a 64-bit integer", w));
  }
  return value;
}

std::int64_t add(std::int64_t a, std::int64_t b, std::int64_t w) {
  std::int64_t sum = 0;
  const bool overflowed = __builtin_add_overflow(a, b, &sum);
  return checked(overflowed, sum, w);
}

}  // namespace

std::vector<CreationCost> creation_costs(const Layout& layout) {
  const std::int64_t w = layout.world_size();
  std::int64_t all_groups = 0;
  std::int64_t largest_group = 1;
  for (ParallelMode mode : layout.modes()) {
    if (mode == ParallelMode::global) continue;
    all_groups = add(all_groups, layout.group_count(mode), w);
    largest_group = std::max(largest_group, layout.group_size(mode));
  }
  const auto k = static_cast<std::int64_t>(layout.modes().size());
  const std::int64_t twice = add(all_groups, all_groups, w);
  // Colossal-AI calls torch.distributed.new_group for every group, on every rank; with
  // NCCL it creates a gloo CPU group beside each device group, doubling the calls.
  return {
      {"colossal-ai (gloo)", "new_group", all_groups, all_groups, w},
      {"colossal-ai (nccl)", "new_group x2", twice, twice, w},
      {"per_group", "MPI_Comm_create", add(1, all_groups, w), add(3, all_groups, w), w},
      {"comm_split", "MPI_Comm_split", k, k + 2, w},
      {"comm_create", "MPI_Comm_create", k, k + 2, w},
      {"create_group", "MPI_Comm_create_group", k, k + 2, largest_group},
  };
}

}  // namespace pgroups
