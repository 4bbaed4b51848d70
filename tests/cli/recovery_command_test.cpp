// `pgroups plan --lost` / `--alive` / `--shrink` and `explain --lost -r R`: the survivors'
// plan, its rank map and spares, one old rank's fate, and the errors of bad lists.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "support/run_command.hpp"
#include "support/temp_files.hpp"

namespace pgroups {
namespace {

using test::run_command;

nlohmann::json plan_json(const std::string& args) {
  const auto result = run_command(fmt::format("{} plan {} --format json", PGROUPS_CLI, args));
  EXPECT_EQ(result.status, 0) << result.err;
  return nlohmann::json::parse(result.out);
}

TEST(RecoveryCommand, JsonIsTheSurvivorsPlanWithRankMapAndSpares) {
  const std::string mesh = "--mesh tp=2,dp=4,pp=2 --group tp --group dp --group pp --group tp-dp";
  const nlohmann::json before = plan_json(mesh);
  const nlohmann::json after = plan_json(mesh + " --lost 3,12");
  EXPECT_EQ(after.at("config").at("world_size"), 8);
  EXPECT_EQ(after.at("config").at("mesh").at("sizes").at("dp"), 2);
  EXPECT_EQ(after.at("rank_map"), (std::vector<std::int64_t>{0, 1, 6, 7, 8, 9, 14, 15}));
  EXPECT_EQ(after.at("spares"), (std::vector<std::int64_t>{2, 4, 5, 10, 11, 13}));
  EXPECT_EQ(after.at("lost"), (std::vector<std::int64_t>{3, 12}));
  EXPECT_EQ(after.at("shrink").at("dropped"), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(after.at("recovery_bill").at("ranks").at("spare"), 6);
  // The new groups of every kind that does not vary dp, mapped to old ranks, are old groups.
  const auto map = after.at("rank_map").get<std::vector<std::int64_t>>();
  for (const std::string kind : {"tp", "pp"}) {
    const auto old_groups = before.at("kinds").at(kind).at("groups").get<std::vector<std::vector<std::int64_t>>>();
    for (const auto& group : after.at("kinds").at(kind).at("groups").get<std::vector<std::vector<std::int64_t>>>()) {
      std::vector<std::int64_t> mapped;
      for (std::int64_t r : group) mapped.push_back(map[r]);
      EXPECT_NE(std::find(old_groups.begin(), old_groups.end(), mapped), old_groups.end()) << kind;
    }
  }
}

TEST(RecoveryCommand, PlacedPlanLosesTheReplicaOfTheLauncherRankAndMapsBackToOldGroups) {
  test::TempDir dir;
  const auto map_file = dir.write("map.json", "[0, 4, 1, 5, 2, 6, 3, 7]");
  const std::string mesh = fmt::format("--mesh tp=2,dp=4 --rank-map {}", map_file.string());
  const nlohmann::json before = plan_json(mesh);
  const nlohmann::json after = plan_json(mesh + " --lost 3");
  EXPECT_EQ(after.at("config").at("world_size"), 6);
  EXPECT_FALSE(after.at("config").contains("rank_map")) << "the new ranks are the new mesh ranks";
  EXPECT_EQ(after.at("rank_map"), (std::vector<std::int64_t>{0, 4, 1, 5, 2, 6}));
  EXPECT_EQ(after.at("spares"), (std::vector<std::int64_t>{7}));
  EXPECT_EQ(after.at("shrink").at("dropped"), (std::vector<std::int64_t>{3}));
  const auto map = after.at("rank_map").get<std::vector<std::int64_t>>();
  const auto old_groups = before.at("kinds").at("tp").at("groups").get<std::vector<std::vector<std::int64_t>>>();
  for (const auto& group : after.at("kinds").at("tp").at("groups").get<std::vector<std::vector<std::int64_t>>>()) {
    std::vector<std::int64_t> mapped;
    for (std::int64_t r : group) mapped.push_back(map[r]);
    EXPECT_NE(std::find(old_groups.begin(), old_groups.end(), mapped), old_groups.end()) << "an old tp group";
  }
  // Joiners replace the replica of the lost launcher rank, not a healthy one.
  const auto small_map = dir.write("small.json", "[0, 2, 1, 3]");
  const nlohmann::json joined =
      plan_json(fmt::format("--mesh tp=2,dp=2 --rank-map {} --alive 0,2,3,4,5", small_map.string()));
  EXPECT_EQ(joined.at("rank_map"), (std::vector<std::int64_t>{0, 2, 4, 5}));
  EXPECT_EQ(joined.at("spares"), (std::vector<std::int64_t>{3}));
}

TEST(RecoveryCommand, WhatIfNodeShowsEachClassOfSingleNodeLossBeforeIt) {
  const auto text =
      run_command(fmt::format("{} plan --mesh tp=2,dp=4,pp=2 --gpus-per-node 4 --what-if node", PGROUPS_CLI));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("what if a node is lost: 4 nodes of 4 GPUs; dp 4 (a replica is 4 ranks); 1 class of "
                          "outcome\n  4 nodes (first: node 0), 2 replicas dropped: dp 4 -> 2, 4 spares, 4..8 "
                          "renumbered; per surviving rank 4 communicators destroyed, 4 created\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("world size 16 = tp 2 x dp 4 x pp 2"), std::string::npos) << "the plan itself follows";
  const nlohmann::json json = plan_json("--mesh tp=2,dp=4,pp=2 --gpus-per-node 8 --what-if node");
  const nlohmann::json& classes = json.at("what_if").at("classes");
  ASSERT_EQ(classes.size(), 1U);
  EXPECT_EQ(classes[0].at("survives"), false);
  EXPECT_EQ(classes[0].at("nodes"), 2);
  EXPECT_TRUE(classes[0].at("communicators_per_rank").is_null());
  const auto refused = run_command(fmt::format("{} plan --mesh tp=2,dp=4 --what-if node", PGROUPS_CLI));
  EXPECT_EQ(refused.status, 3);
  EXPECT_NE(refused.err.find("--what-if node needs the nodes: give --gpus-per-node G"), std::string::npos)
      << refused.err;
  const auto both =
      run_command(fmt::format("{} plan --mesh tp=2,dp=4 --gpus-per-node 2 --what-if node --lost 1", PGROUPS_CLI));
  EXPECT_EQ(both.status, 2) << both.err;
}

TEST(RecoveryCommand, TextShowsTheNewLayoutTheSparesAndWhatMoved) {
  const auto result = run_command(fmt::format("{} plan -w 16 -p 2 -t 2 --lost 5", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("data 4 -> 3 (a replica is 4 ranks)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("dropped data=1: ranks [4, 5, 6, 7], lost [5]"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("spares: 3 [4, 6, 7]"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("moved: data=2..3 -> 1..2 (8 ranks renumbered"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("world size 12 = data 3 x pipeline 2 x tensor 2"), std::string::npos) << result.out;
}

TEST(RecoveryCommand, AliveRanksPastTheWorldJoinAsANewReplica) {
  const nlohmann::json after = plan_json("-w 8 -p 2 --alive 0-7,8,9,10");
  EXPECT_EQ(after.at("config").at("world_size"), 10);
  EXPECT_EQ(after.at("rank_map"), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(after.at("spares"), (std::vector<std::int64_t>{10}));
  EXPECT_EQ(after.at("joining"), (std::vector<std::int64_t>{8, 9, 10}));
}

TEST(RecoveryCommand, ShrinkNamesAnotherDimension) {
  const nlohmann::json after = plan_json("--mesh tp=4,dp=2,pp=2 --lost 8-15 --shrink pp");
  EXPECT_EQ(after.at("config").at("mesh").at("sizes").at("pp"), 1);
  EXPECT_EQ(after.at("rank_map"), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(RecoveryCommand, ResizeToGivesTheLayoutOfTheSameShapeForAnotherWorld) {
  const nlohmann::json fewer = plan_json("--mesh tp=2,dp=4,pp=2 --resize-to 13");
  EXPECT_EQ(fewer.at("config").at("mesh").at("sizes").at("dp"), 3);
  EXPECT_EQ(fewer.at("resize").at("spares"), 1);
  EXPECT_EQ(fewer.at("resize").at("first_spare"), 12);
  EXPECT_EQ(plan_json("--mesh tp=2,dp=4,pp=2 --resize-to 24").at("config").at("mesh").at("sizes").at("dp"), 6);
  EXPECT_EQ(plan_json("--mesh tp=2,dp=4,pp=2 --resize-to 12 --shrink pp").at("resize").at("spares"), 4);
  const auto text = run_command(fmt::format("{} plan --mesh tp=2,dp=4,pp=2 --resize-to 13", PGROUPS_CLI));
  EXPECT_NE(text.out.find("resize of world size 16 to 13 ranks: dp 4 -> 3 (a replica is 4 ranks); ranks 0-11 run "
                          "the layout, spares: 1 (rank 12)"),
            std::string::npos)
      << text.out;
  const auto small = run_command(fmt::format("{} plan --mesh tp=2,dp=4,pp=2 --resize-to 3", PGROUPS_CLI));
  EXPECT_EQ(small.status, 3);
  EXPECT_NE(small.err.find("a world of 3 ranks holds no whole replica of dp: one replica (every dimension but dp) "
                           "has 4 ranks"),
            std::string::npos)
      << small.err;
  EXPECT_NE(run_command(fmt::format("{} plan --mesh tp=2,dp=4 --resize-to 8 --lost 1", PGROUPS_CLI)).status, 0);
}

// The batch rule is for a dimension that splits the data; a model dimension's resize
// re-shards the weights and leaves the batch alone, in the text and in the JSON.
TEST(RecoveryCommand, ResizeGivesTheBatchRuleOnlyForADimensionThatSplitsTheData) {
  const auto model = run_command(fmt::format("{} plan --mesh tp=2,dp=4,pp=2 --resize-to 12 --shrink pp", PGROUPS_CLI));
  ASSERT_EQ(model.status, 0) << model.err;
  EXPECT_EQ(model.out.find("global batch"), std::string::npos) << model.out;
  EXPECT_NE(model.out.find("model: pp splits the model, not the data, so the batch is unchanged; its weights go from "
                           "2 parts to 1 (load the checkpoint re-sharded for pp=1)"),
            std::string::npos)
      << model.out;
  EXPECT_EQ(plan_json("--mesh tp=4,dp=2 --resize-to 6 --shrink tp").at("resize").at("splits"), "model");
  for (const char* data : {"dp_shard", "dp_replicate", "fsdp"}) {
    const auto result =
        run_command(fmt::format("{} plan --mesh tp=2,{}=4 --resize-to 6 --shrink {}", PGROUPS_CLI, data, data));
    ASSERT_EQ(result.status, 0) << result.err;
    EXPECT_NE(result.out.find(fmt::format("data: each replica of {} keeps its batch", data)), std::string::npos)
        << result.out;
  }
  EXPECT_EQ(plan_json("--mesh tp=2,dp=4 --resize-to 6").at("resize").at("splits"), "data");
  EXPECT_EQ(plan_json("-w 8 -p 2 -t 2 --resize-to 6").at("resize").at("splits"), "data");
}

TEST(RecoveryCommand, ExplainTellsAnOldRanksFate) {
  auto result = run_command(fmt::format("{} explain -w 16 -p 2 -t 2 --lost 5 -r 9", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("old rank 9 runs new rank 5"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("rank 5 of 12"), std::string::npos) << result.out;
  result = run_command(fmt::format("{} explain -w 16 -p 2 -t 2 --lost 5 -r 6", PGROUPS_CLI));
  EXPECT_NE(result.out.find("old rank 6 is a spare: its replica data=1 lost a rank and was dropped"), std::string::npos)
      << result.out;
  result = run_command(fmt::format("{} explain -w 16 -p 2 -t 2 --lost 5 -r 5 --format json", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json.at("recovery").at("fate"), "lost");
  EXPECT_TRUE(json.at("recovery").at("new_rank").is_null());
  result = run_command(fmt::format("{} explain -w 16 -p 2 -t 2 --lost 5 -r 9 --format json", PGROUPS_CLI));
  EXPECT_EQ(nlohmann::json::parse(result.out).at("rank"), 5);
}

TEST(RecoveryCommand, AnswersAtOnceAtTwoToTheFortyRanksAndRefusesItsJson) {
  const auto start = std::chrono::steady_clock::now();
  const std::string world = "-w 1099511627776 -p 8 -t 8";
  auto result = run_command(fmt::format("{} plan {} --lost 5,549755813895", PGROUPS_CLI, world));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("spares: 126 ["), std::string::npos) << result.out;
  result = run_command(fmt::format("{} explain {} --lost 5 -r 1099511627775", PGROUPS_CLI, world));
  EXPECT_NE(result.out.find("old rank 1099511627775 runs new rank 1099511627711"), std::string::npos) << result.out;
  result = run_command(fmt::format("{} plan {} --lost 5 --format json", PGROUPS_CLI, world));
  EXPECT_EQ(result.status, 3);
  EXPECT_NE(result.err.find("too large for --format json"), std::string::npos) << result.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

struct BadInput {
  std::string args;
  int status;
  std::string message;
};

TEST(RecoveryCommand, BadListsNameTheValueAndTheRule) {
  const std::vector<BadInput> cases = {
      {"-w 8 --lost 8", 3, "lost rank 8 is outside the world of 8 ranks: a lost rank is in [0, 8)"},
      {"-w 8 --lost 2,2", 3, "rank 2 is listed twice as lost: each rank may be named once"},
      {"-w 8 --lost=-1", 2, "--lost -1 is out of range"},
      {"-w 8 --lost 3x", 2, "--lost must be an integer, found '3x'"},
      {"-w 8 --lost 3,,4", 2, "--lost '3,,4' has an empty item"},
      {"-w 8 --lost 5-3", 2, "--lost range 5-3 ends below its start"},
      // A range that ends at the largest 64-bit integer ends: counted, not stepped past it.
      {"-w 8 --lost 9223372036854775807", 3, "lost rank 9223372036854775807 is outside the world of 8 ranks"},
      {"--mesh tp=2,dp=4 --lost 1 --shrink pd", 3,
       "shrinking dimension 'pd' is not a dimension of the mesh: its dimensions are tp, dp (did you mean dp?)"},
      {"-w 8 --shrink pp", 2, "--shrink names the dimension a recovery shrinks: give --lost or --alive too"},
      {"-w 8 --lost 1 --alive 0", 2, "excludes"},
      {"-w 4 -p 2 --lost 0,3", 3,
       "no layout remains: every replica of data lost a rank (data=0: lost rank 0; data=1: lost rank 3)"},
  };
  for (const BadInput& bad : cases) {
    SCOPED_TRACE(bad.args);
    const auto result = run_command(fmt::format("{} plan {}", PGROUPS_CLI, bad.args));
    EXPECT_EQ(result.status, bad.status) << result.err;
    EXPECT_NE(result.err.find(bad.message), std::string::npos) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
  const auto joined =
      run_command(fmt::format("{} plan -w 8 --alive 0-6,9223372036854775806-9223372036854775807", PGROUPS_CLI));
  EXPECT_EQ(joined.status, 0) << joined.err;
  EXPECT_NE(joined.out.find("1 lost, 2 joining"), std::string::npos) << joined.out;
}

}  // namespace
}  // namespace pgroups
