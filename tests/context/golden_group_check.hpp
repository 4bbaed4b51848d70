#pragma once
// One check shared by the golden tests of presets and of named meshes: the group kind's
// live communicator, as this rank sees it, against the golden file's entry, and the
// context's own answers against what the communicator reported.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "pgroups/context/parallel_context.hpp"

namespace pgroups::test {

/// `expected` is the golden file's entry of `kind` ({"groups", "local_rank", "world_size"}).
/// Returns what this rank observed, for further checks.
inline Observed expect_golden_group(const ParallelContext& context, const std::string& kind,
                                    const nlohmann::json& expected) {
  const std::int64_t me = context.global_rank();
  const Observed seen = observe(context.get_group(kind).mpi(), static_cast<int>(me));
  const auto groups = expected.at("groups").get<std::vector<std::vector<std::int64_t>>>();
  // Groups partition the world, so "every rank's observed group is a golden group"
  // means the observed groups are exactly the golden ones.
  EXPECT_NE(std::find(groups.begin(), groups.end(), seen.members), groups.end())
      << "observed group " << ::testing::PrintToString(seen.members) << " is not a golden group";
  const auto index = static_cast<std::size_t>(me);
  EXPECT_EQ(seen.rank, expected.at("local_rank").at(index).get<std::int64_t>());
  EXPECT_EQ(seen.size, expected.at("world_size").at(index).get<std::int64_t>());
  EXPECT_EQ(context.local_rank(kind), seen.rank);
  EXPECT_EQ(context.world_size(kind), seen.size);
  EXPECT_EQ(context.ranks_in_group(kind), seen.members);
  return seen;
}

}  // namespace pgroups::test
