// The communicator bill (docs/using/context.md, "Communicator economy") in `explain` and `plan`, as a user runs them:
// its figures at W = 1024 without MPI, and --backend nccl's labelled estimate.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "support/run_command.hpp"

namespace pgroups {
namespace {

using test::run_command;

constexpr const char* kMegatronMesh =
    "-w 1024 --mesh tp=8,cp=1,ep=1,dp=16,pp=8 --group tp,cp,ep,dp,pp,tp-pp,tp-dp,dp-cp,tp-cp,embd";

TEST(CommunicatorBillCli, ExplainGivesTheFirstStageRankSevenCreatedAndAMiddleStageRankSix) {
  const auto first = run_command(fmt::format("{} explain {} -r 5 --format json", PGROUPS_CLI, kMegatronMesh));
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(nlohmann::json::parse(first.out).at("communicators"),
            (nlohmann::json{{"kinds", 10}, {"distinct", 6}, {"singletons", 2}, {"created", 7}}));
  const auto middle = run_command(fmt::format("{} explain {} -r 300", PGROUPS_CLI, kMegatronMesh));
  ASSERT_EQ(middle.status, 0) << middle.err;
  EXPECT_NE(middle.out.find("communicators: kinds 10, distinct 6, singletons 2, created 6 communicators per rank"),
            std::string::npos)
      << middle.out;
}

TEST(CommunicatorBillCli, PlanWithNcclGivesTheLargestFiguresAndALabelledEstimate) {
  const auto result =
      run_command(fmt::format("{} plan {} --backend nccl --gpus-per-node 8 --format json", PGROUPS_CLI, kMegatronMesh));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json.at("communicators").at("created"), 7);
  EXPECT_EQ(json.at("communicators").at("nccl_created"), 7);
  // Seven communicators of more than two ranks but embd's two: 6 x 688 MB + 544 MB.
  EXPECT_NEAR(json.at("estimated_nccl_mib").get<double>(), (6 * 688e6 + 544e6) / (1024.0 * 1024), 1e-6);
  EXPECT_TRUE(json.at("estimated_nccl").at("estimate").get<bool>());
  EXPECT_EQ(json.at("estimated_nccl").at("communicators"), 7);
}

TEST(CommunicatorBillCli, NoShareCountsOneCommunicatorPerKindOfSeveralRanks) {
  const auto result =
      run_command(fmt::format("{} explain {} -r 5 --no-share --format json", PGROUPS_CLI, kMegatronMesh));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out).at("communicators").at("created"), 9);  // the duplicate and 8 kinds
}

#ifdef PGROUPS_TEST_CLI_WITH_JOBS  // bench is built with the context
TEST(CommunicatorBillCli, BenchModelComparesWithMegatronAtAThousandRanks) {
  const auto result = run_command(fmt::format("{} bench --model --tensor 2 --max-world 4 --format json", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json.at("schema_version"), 2);
  EXPECT_EQ(json.at("model")[0].at("kinds"), json.at("model")[0].at("modes"));
  const nlohmann::json rows = json.at("megatron");
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].at("world_size"), 1024);
  EXPECT_EQ(rows[0].at("megatron_groups_per_rank").at("first_stage"), 23);
  EXPECT_EQ(rows[0].at("pgroups_created_per_rank").at("first_stage"), 7);
  EXPECT_LT(rows[1].at("pgroups_created_per_rank").at("middle_stage").get<int>(),
            rows[1].at("megatron_groups_per_rank").at("middle_stage").get<int>());
}
#endif

}  // namespace
}  // namespace pgroups
