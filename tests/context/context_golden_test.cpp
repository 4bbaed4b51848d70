// Every golden layout that fits the world, built live by each creation strategy: the
// communicators hold exactly Colossal-AI's groups and local ranks. The golden files
// hold Colossal-AI's contiguous sequence_dp blocks, so the legacy switch is on.

#include <gtest/gtest.h>

#include <tuple>

#include "golden_group_check.hpp"
#include "mpi_test_support.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "support/golden.hpp"

namespace pgroups {
namespace {

constexpr std::int64_t kLargestWorld = 16;

std::vector<std::filesystem::path> small_golden_files() { return test::golden_files_up_to("golden", kLargestWorld); }

using GoldenCase = std::tuple<std::filesystem::path, CreationStrategy>;

class LiveGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(LiveGolden, CommunicatorsHoldColossalGroupsAndLocalRanks) {
  const auto& [path, strategy] = GetParam();
  const nlohmann::json golden = test::load_json(path);
  ParallelConfig config = test::config_from_golden(golden.at("config"));
  if (config.world_size != test::world_size()) {
    GTEST_SKIP() << "for a world of " << config.world_size << " ranks";
  }
  config.legacy_sequence_dp = true;
  ContextOptions options;
  options.strategy = strategy;
  const ParallelContext context(config, MPI_COMM_WORLD, options);

  std::vector<std::string> expected_modes;
  for (const auto& [name, _] : golden.at("modes").items()) expected_modes.push_back(name);
  std::vector<std::string> created;
  for (ParallelMode mode : context.modes()) created.emplace_back(mode_name(mode));
  std::sort(expected_modes.begin(), expected_modes.end());
  std::sort(created.begin(), created.end());
  EXPECT_EQ(created, expected_modes);

  for (ParallelMode mode : context.modes()) {
    SCOPED_TRACE(std::string(mode_name(mode)));
    const nlohmann::json& expected = golden.at("modes").at(std::string(mode_name(mode)));
    (void)test::expect_golden_group(context, std::string(mode_name(mode)), expected);
  }
}

std::string golden_case_name(const ::testing::TestParamInfo<GoldenCase>& param) {
  const std::string file = test::test_name({std::get<0>(param.param), param.index});
  return file + "_" + std::string(strategy_name(std::get<1>(param.param)));
}

INSTANTIATE_TEST_SUITE_P(GoldenFiles, LiveGolden,
                         ::testing::Combine(::testing::ValuesIn(small_golden_files()),
                                            ::testing::ValuesIn(kAllCreationStrategies)),
                         golden_case_name);

}  // namespace
}  // namespace pgroups
