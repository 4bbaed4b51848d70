// `pgroups verify` under mpirun, as a user runs it: the communicators it reports equal
// Colossal-AI's golden layout for every strategy, and ranks that disagree end quickly
// with a non-zero status and a message that says "mismatch".

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "pgroups/mpi/strategy.hpp"
#include "support/golden.hpp"
#include "support/run_command.hpp"

namespace pgroups {
namespace {

using test::run_command;

class VerifyGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(VerifyGolden, JsonReportsTheGoldenGroupsAsLiveCommunicators) {
  const nlohmann::json golden = test::load_json(test::data_dir() / "golden" / "w8_p2_t4_2d.json");
  const auto result = run_command(
      test::pgroups_on_ranks(8, "verify --pipeline 2 --tensor 4 --mode 2d --format json --strategy " + GetParam()));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report.at("ok"), true);
  // "split", deprecated, names the default strategy; the report names the strategy itself.
  EXPECT_EQ(report.at("strategy"), strategy_name(parse_creation_strategy(GetParam())));
  const bool deprecated = GetParam() == "split";
  EXPECT_EQ(result.err.find("pgroups: warning: strategy 'split' is deprecated") != std::string::npos, deprecated)
      << result.err;
  EXPECT_GT(report.at("create_seconds").get<double>(), 0.0);
  test::expect_plan_equals_golden(report, golden);
  for (const auto& [name, mode] : report.at("modes").items()) EXPECT_EQ(mode.at("ok"), true) << name;
}

INSTANTIATE_TEST_SUITE_P(Strategies, VerifyGolden,
                         ::testing::Values("split", "comm_split", "create_group", "per_group", "comm_create"));

TEST(Verify, TextReportsEveryModeOkAndOnlyRankZeroPrints) {
  const auto result = run_command(test::pgroups_on_ranks(4, "verify --pipeline 2 --tensor 2 --mode 1d"));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("pgroups verify: W=4 pipeline=2 tensor=2 mode=1d"), std::string::npos) << result.out;
  for (const char* mode : {"global", "data", "model", "pipe", "tensor", "1d"}) {
    EXPECT_NE(result.out.find(fmt::format("\n{:<20} ", mode)), std::string::npos) << mode << "\n" << result.out;
  }
  EXPECT_EQ(result.out.find("FAIL"), std::string::npos) << result.out;
  // One report, not one per rank.
  EXPECT_EQ(result.out.find("pgroups verify:"), result.out.rfind("pgroups verify:")) << result.out;
  EXPECT_NE(result.out.find("OK: every communicator of 6 group kinds matches the layout on all 4 ranks"),
            std::string::npos);
}

TEST(Verify, RanksWithDifferentConfigurationsExitQuicklySayingMismatch) {
  const auto start = std::chrono::steady_clock::now();
  const auto result = run_command(fmt::format("{} -np 3 {} verify --tensor 2 : -np 1 {} verify --tensor 4",
                                              PGROUPS_MPIEXEC, PGROUPS_CLI, PGROUPS_CLI));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(result.status, 0);
  EXPECT_NE(result.err.find("configuration mismatch across 4 ranks: ranks 0-2 hold"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("rank 3 holds 'world_size=4 pipeline=1 tensor=4"), std::string::npos) << result.err;
  EXPECT_LT(seconds, 30.0);
}

TEST(Verify, InvalidConfigurationExitsWithTheConfigStatusOnEveryRank) {
  const auto result = run_command(test::pgroups_on_ranks(4, "verify --tensor 3"));
  EXPECT_EQ(result.status, 3) << result.err;
  EXPECT_NE(result.err.find("pgroups: error: world size 4 is not divisible"), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
}

}  // namespace
}  // namespace pgroups
