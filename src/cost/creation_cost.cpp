#include "pgroups/cost/creation_cost.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "pgroups/common/error.hpp"

namespace pgroups {

namespace {

// Every count is checked: a world near 2^63 ranks is a valid layout, but 19 kinds of
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
  // The steps a context runs on the MPI backend (pgroups/context/creation_steps.hpp;
  // CreationSteps.TheCostModelCountsOneCollectivePerStep holds the two together): the
  // duplicate, the agreement and the node query, then one per kind but `global`, which
  // the duplicate serves. One creation call per group step plus the duplicate, and one
  // collective per step.
  constexpr std::int64_t kStepsBeforeTheKinds = 3;
  const auto kinds = layout.group_kinds();
  const std::int64_t w = layout.world_size();
  std::int64_t all_groups = 0;
  std::int64_t largest_group = 1;
  std::int64_t group_steps = 0;
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    if (kinds[kind].mode == ParallelMode::global) continue;
    ++group_steps;
    all_groups = add(all_groups, layout.group_count(kind), w);
    largest_group = std::max(largest_group, layout.group_size(kind));
  }
  const std::int64_t k = 1 + group_steps;  // the duplicate serves as `global`
  const std::int64_t collectives = kStepsBeforeTheKinds + group_steps;
  const std::int64_t twice = add(all_groups, all_groups, w);
  // Colossal-AI calls torch.distributed.new_group for every group, on every rank; with
  // NCCL it creates a gloo CPU group beside each device group, doubling the calls.
  return {
      {"colossal-ai (gloo)", "new_group", all_groups, all_groups, w},
      {"colossal-ai (nccl)", "new_group x2", twice, twice, w},
      {"per_group", "MPI_Comm_create", add(1, all_groups, w), add(collectives - group_steps, all_groups, w), w},
      {"comm_split", "MPI_Comm_split", k, collectives, w},
      {"comm_create", "MPI_Comm_create", k, collectives, w},
      {"create_group", "MPI_Comm_create_group", k, collectives, largest_group},
  };
}

}  // namespace pgroups
