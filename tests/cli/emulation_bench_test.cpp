// `pgroups bench --emulate` as a user runs it (docs/developing/scale.md): the report's
// figures against pgroups' own server, the node relay, torch's loop, and what it refuses.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/run_command.hpp"

namespace pgroups {
namespace {

using test::run_command;

#ifdef PGROUPS_TEST_CLI_WITH_JOBS  // bench is built with the context
TEST(EmulationBenchCli, NcclTrafficOfAThousandRanksReportsTheModelsTurnsAndOneIdPerGroup) {
  const auto result = run_command(
      fmt::format("{} bench --emulate 1024 --mesh tp=8,cp=2,pp=8,dp=8 --backend nccl --format json", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json json = nlohmann::json::parse(result.out);
  const auto model = run_command(fmt::format("{} bench --model --mesh tp=8,cp=2,pp=8,dp=8 --format json", PGROUPS_CLI));
  ASSERT_EQ(model.status, 0) << model.err;
  const nlohmann::json cost = nlohmann::json::parse(model.out).at("model")[0].at("env_bootstrap");
  EXPECT_EQ(json.at("emulated_ranks"), 1024);
  EXPECT_EQ(json.at("connections"), 1024);
  EXPECT_EQ(json.at("traffic"), "nccl");
  EXPECT_EQ(json.at("round_trips_per_rank"), cost.at("round_trips_per_rank"));
  // The agreements' constants and the ids of a rank's three groups beyond its node's tp:
  // far below gloo's addresses of its 1 + 7 + 7 + 7 peers.
  EXPECT_LT(json.at("bytes_per_rank").at("max").get<double>(), cost.at("bytes_read_per_rank").get<double>());
  EXPECT_GT(json.at("seconds").get<double>(), 0.0);
}

TEST(EmulationBenchCli, ARelayOfEightRanksMakesAnEighthOfTheConnections) {
  const auto result =
      run_command(fmt::format("{} bench --emulate 256 --mesh tp=8,dp=32 --relay 8 --format json", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json.at("connections"), 32);
  EXPECT_EQ(json.at("ranks_per_connection"), 8);
  EXPECT_EQ(json.at("traffic"), "gloo");
}

TEST(EmulationBenchCli, TorchsLoopExtrapolatesFromTheGroupsItPlayed) {
  const auto result = run_command(
      fmt::format("{} bench --emulate 64 --mesh tp=2,dp=32 --loop --loop-groups 4 --backend gloo", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("torch's new_group loop"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("(4 of 34 groups emulated)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("max 13, median 13"), std::string::npos) << result.out;  // 1 + 3 x 4
}

TEST(EmulationBenchCli, WhatTheEmulationCannotDoIsAnErrorNamingTheValueAndTheRule) {
  const std::pair<std::string, std::string> cases[] = {
      {"--emulate 0 --mesh tp=2", "--emulate 0 is invalid: it must be at least 1"},
      {"--emulate 8 --mesh tp=2,dp=4 --backend mpi", "--backend mpi is invalid with --emulate"},
      {"--emulate 8 --mesh tp=2,dp=4 --backend gloo --relay 9", "ranks per store client 9 is invalid"},
      {"--emulate 8 --mesh tp=2,dp=4 --backend gloo --store 127.0.0.1:70000", "--store '127.0.0.1:70000' is invalid"},
      {"--emulate 8 --mesh tp=2,dp=4 --backend gloo --loop-groups 2", "--loop-groups is invalid without --loop"},
      {"--mesh tp=2,dp=4 --backend gloo --relay 2", "are options of --emulate"},
      {"--emulate 8 --model --mesh tp=2,dp=4", "--model and --emulate are two benchmarks"},
      {"--emulate 8 --mesh tp=2,dp=2", "world size"},
  };
  for (const auto& [arguments, message] : cases) {
    const auto result = run_command(fmt::format("{} bench {}", PGROUPS_CLI, arguments));
    EXPECT_EQ(result.status, 3) << arguments << ": " << result.err;
    EXPECT_NE(result.err.find(message), std::string::npos) << arguments << ": " << result.err;
  }
}

TEST(EmulationBenchCli, AStoreThatIsNotThereIsABackendError) {
  // Port 1 on this machine: nothing listens there.
  const auto result =
      run_command(fmt::format("{} bench --emulate 4 --mesh tp=2,dp=2 --backend gloo --store 127.0.0.1:1", PGROUPS_CLI));
  EXPECT_EQ(result.status, 6) << result.err;
  EXPECT_NE(result.err.find("127.0.0.1:1"), std::string::npos) << result.err;
}
#endif

}  // namespace
}  // namespace pgroups
