#include "pgroups/cost/creation_cost.hpp"

#include <gtest/gtest.h>

#include "support/configs.hpp"
#include "support/golden.hpp"

namespace pgroups {
namespace {

class CreationCostGolden : public ::testing::TestWithParam<std::filesystem::path> {};

// The golden files record how many new_group calls Colossal-AI made on each rank.
TEST_P(CreationCostGolden, ColossalCallsPerRankEqualTheRecordedCount) {
  const nlohmann::json golden = test::load_json(GetParam());
  const Layout layout(test::config_from_golden(golden.at("config")));
  const auto costs = creation_costs(layout);
  EXPECT_EQ(costs[0].calls_per_rank, golden.at("new_group_calls_per_rank").get<std::int64_t>());
  EXPECT_EQ(costs[1].calls_per_rank, 2 * costs[0].calls_per_rank);
}

INSTANTIATE_TEST_SUITE_P(GoldenFiles, CreationCostGolden, ::testing::ValuesIn(test::golden_files("golden")),
                         test::test_name);

TEST(CreationCost, OneCallPerModeWhateverTheWorldSize) {
  ParallelConfig config = test::preset_config(std::int64_t{1} << 20, 16, 64, TensorMode::tensor_3d);
  const auto costs = creation_costs(Layout(config));
  EXPECT_EQ(costs[3].algorithm, "comm_split");
  EXPECT_EQ(costs[3].calls_per_rank, 10);  // global's duplicate and 9 modes
  EXPECT_EQ(costs[3].collectives_per_rank, 12);  // and the agreement and node query
  EXPECT_EQ(costs[5].algorithm, "create_group");
  EXPECT_EQ(costs[5].calls_per_rank, 10);
  EXPECT_EQ(costs[5].largest_collective, 1024);  // the data group: 2^20 / (16 * 64)
  EXPECT_GT(costs[2].calls_per_rank, 1'000'000);
}

}  // namespace
}  // namespace pgroups
