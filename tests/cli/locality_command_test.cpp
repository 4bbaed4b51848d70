// Nodes in `plan`, `explain` and `info` as a user runs them: the locality report (JSON
// and text), its warnings on stderr, the node of a rank, the config key, the pictures'
// errors, and the launcher that `info` sees.

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "support/run_command.hpp"
#include "support/temp_files.hpp"

namespace pgroups {
namespace {

using test::run_command;

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(PlanLocality, TheIssueExampleCountsMatchTheGroupsAndWarnsAboutTensorGroups) {
  const auto result = run_command(fmt::format(
      "{} plan --world-size 1024 --pipeline 4 --tensor 16 --mode 2d --gpus-per-node 8 --format json", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json plan = nlohmann::json::parse(result.out);
  const nlohmann::json& locality = plan.at("locality");
  EXPECT_EQ(locality.at("gpus_per_node"), 8);
  EXPECT_EQ(locality.at("nodes"), 128);
  ASSERT_EQ(locality.at("kinds").size(), plan.at("kinds").size());
  for (const auto& [mode, entry] : plan.at("kinds").items()) {
    std::int64_t within = 0;
    std::int64_t across = 0;
    for (const auto& group : entry.at("groups")) {
      std::set<std::int64_t> nodes;
      for (const auto& rank : group) nodes.insert(rank.get<std::int64_t>() / 8);
      ++(nodes.size() == 1 ? within : across);
    }
    EXPECT_EQ(locality.at("kinds").at(mode).at("groups_within_node"), within) << mode;
    EXPECT_EQ(locality.at("kinds").at(mode).at("groups_across_nodes"), across) << mode;
  }
  EXPECT_EQ(locality.at("kinds").at("tensor"),
            nlohmann::json({{"groups_within_node", 0}, {"groups_across_nodes", 64}}));
  EXPECT_EQ(lines(result.err), 2U) << result.err;
  EXPECT_EQ(result.err.rfind("pgroups: warning: tensor groups cross nodes: 64 of 64 groups of 16 ranks span more than "
                             "one node of 8 GPUs",
                             0),
            0U)
      << result.err;
  EXPECT_NE(result.err.find("fix: a tensor size that divides 8 (--tensor 4 is valid here), or nodes of a multiple of "
                            "16 GPUs (--gpus-per-node 16)\n"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("pgroups: warning: 2d_col groups cross nodes: 256 of 256"), std::string::npos)
      << result.err;
}

TEST(PlanLocality, MeshGroupsAreCountedAndATpGroupAcrossNodesIsWarnedAbout) {
  const auto result = run_command(
      fmt::format("{} plan --mesh tp=4,dp=4 --group tp --group dp --gpus-per-node 2 --format json", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json locality = nlohmann::json::parse(result.out).at("locality");
  EXPECT_EQ(locality.at("nodes"), 8);
  EXPECT_EQ(locality.at("kinds").at("tp"), nlohmann::json({{"groups_within_node", 0}, {"groups_across_nodes", 4}}));
  EXPECT_EQ(locality.at("kinds").at("dp"), nlohmann::json({{"groups_within_node", 0}, {"groups_across_nodes", 4}}));
  EXPECT_EQ(result.err.rfind("pgroups: warning: tp groups cross nodes: 4 of 4 groups of 4 ranks span more than one "
                             "node of 2 GPUs",
                             0),
            0U)
      << result.err;
  EXPECT_EQ(result.err.find("dp groups cross"), std::string::npos) << result.err;

  const auto fits = run_command(
      fmt::format("{} plan --mesh tp=4,dp=4 --group tp --group dp --gpus-per-node 4 --format json", PGROUPS_CLI));
  ASSERT_EQ(fits.status, 0) << fits.err;
  EXPECT_EQ(nlohmann::json::parse(fits.out).at("locality").at("kinds").at("tp"),
            nlohmann::json({{"groups_within_node", 4}, {"groups_across_nodes", 0}}));
  EXPECT_EQ(fits.err, "");
}

TEST(PlanLocality, TextHasAColumnOfCountsPerModeAndNoWarningWhenTensorGroupsFit) {
  const auto result = run_command(fmt::format("{} plan -w 32 -p 2 -t 8 -m 2.5d -d 2 --gpus-per-node 8", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_NE(result.out.find("\nlocality: 4 nodes of 8 GPUs (node n holds ranks n*8 to n*8+7)\n"
                            "kind                       size  within node  across nodes\n"
                            "global                       32            0             1\n"
                            "data                          2            0            16\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("\ntensor                        8            4             0\n"), std::string::npos)
      << result.out;
}

TEST(PlanLocality, CrossingTensorGroupsAreMarkedInTheText) {
  const auto result = run_command(fmt::format("{} plan -w 16 -t 8 -m 1d --gpus-per-node 4", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(
      result.out.find("\ntensor                        8            0             2  <- tensor traffic across nodes\n"),
      std::string::npos)
      << result.out;
  EXPECT_EQ(lines(result.err), 2U) << result.err;  // tensor and 1d
  EXPECT_NE(result.err.find("pgroups: warning: 1d groups cross nodes"), std::string::npos) << result.err;
}

TEST(PlanLocality, WorldThatDoesNotFillWholeNodesIsAConfigError) {
  const auto result = run_command(fmt::format("{} plan -w 12 -t 4 --gpus-per-node 8", PGROUPS_CLI));
  EXPECT_EQ(result.status, 3);
  EXPECT_TRUE(result.out.empty());
  EXPECT_EQ(result.err,
            "pgroups: error: world size 12 is not divisible by gpus per node 8: nodes are consecutive blocks of 8 "
            "ranks, so the world must fill whole nodes\n");
  const auto zero = run_command(fmt::format("{} plan -w 12 --gpus-per-node 0", PGROUPS_CLI));
  EXPECT_EQ(zero.status, 3);
  EXPECT_EQ(zero.err, "pgroups: error: gpus per node 0 is invalid: it must be a positive integer\n");
}

TEST(PlanLocality, WithoutGpusPerNodeThereIsNoReport) {
  const auto result = run_command(fmt::format("{} plan -w 16 -t 8 --format json", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_FALSE(nlohmann::json::parse(result.out).contains("locality"));
  EXPECT_EQ(result.err, "");
}

TEST(PlanLocality, ConfigKeyGivesTheNodesAndTheFlagOverridesIt) {
  const test::TempDir files;
  const auto path = files.write("nodes.toml", "[parallel]\nworld_size = 16\ntensor = 4\ngpus_per_node = 4\n");
  const auto file = run_command(fmt::format("{} plan --config {} --format json", PGROUPS_CLI, path.string()));
  ASSERT_EQ(file.status, 0) << file.err;
  EXPECT_EQ(nlohmann::json::parse(file.out).at("locality").at("nodes"), 4);
  const auto flag =
      run_command(fmt::format("{} plan --config {} --gpus-per-node 8 --format json", PGROUPS_CLI, path.string()));
  ASSERT_EQ(flag.status, 0) << flag.err;
  EXPECT_EQ(nlohmann::json::parse(flag.out).at("locality").at("nodes"), 2);
  files.write("nodes.toml", "[parallel]\nworld_size = 16\ngpus_per_node = \"eight\"\n");
  const auto wrong = run_command(fmt::format("{} plan --config {}", PGROUPS_CLI, path.string()));
  EXPECT_EQ(wrong.status, 4);
  EXPECT_NE(wrong.err.find("parallel.gpus_per_node must be an integer, found string \"eight\""), std::string::npos)
      << wrong.err;
}

TEST(PlanLocality, HugeWorldsCountTensorGroupsInClosedForm) {
  const auto result =
      run_command(fmt::format("{} plan -w 1073741824 -p 16 -t 64 -m 3d --gpus-per-node 8", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("locality: 134217728 nodes of 8 GPUs"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("groups are not counted by node above 4194304 ranks"), std::string::npos) << result.out;
  EXPECT_EQ(result.err.rfind("pgroups: warning: tensor groups cross nodes: 16777216 of 16777216 groups of 64 ranks", 0),
            0U)
      << result.err;
}

TEST(ExplainNode, NamesTheRanksNodeAndLocalIndex) {
  const auto text =
      run_command(fmt::format("{} explain -w 1024 -p 4 -t 16 -m 2d --gpus-per-node 8 -r 21", PGROUPS_CLI));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("\nnode 2 of 128 (8 GPUs per node), local index 5\n"), std::string::npos) << text.out;
  const auto json = run_command(
      fmt::format("{} explain -w 1024 -p 4 -t 16 -m 2d --gpus-per-node 8 -r 21 --format json", PGROUPS_CLI));
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out).at("node"),
            nlohmann::json({{"node", 2}, {"local_index", 5}, {"nodes", 128}, {"gpus_per_node", 8}}));
  EXPECT_NE(json.err.find("pgroups: warning: tensor groups cross nodes"), std::string::npos) << json.err;
}

TEST(PlanPicture, WorldTooLargeToDrawIsAConfigErrorAndAnUnwritableFileAnIoError) {
  const auto large = run_command(fmt::format("{} plan -w 32768 --svg /dev/null", PGROUPS_CLI));
  EXPECT_EQ(large.status, 3);
  EXPECT_NE(large.err.find("world size 32768 is too large to draw (at most 16384 ranks)"), std::string::npos)
      << large.err;
  const auto unwritable = run_command(fmt::format("{} plan -w 8 --html /nonexistent/dir/p.html", PGROUPS_CLI));
  EXPECT_EQ(unwritable.status, 5);
  EXPECT_EQ(
      unwritable.err,
      "pgroups: error: cannot write --html to '/nonexistent/dir/p.html': create a temporary file beside it failed: No "
      "such file or directory\n");
}

TEST(InfoLauncher, ReportsTheHostAndWhatTorchrunsVariablesSay) {
  const auto result =
      run_command(fmt::format("env -i RANK=11 WORLD_SIZE=16 LOCAL_RANK=3 LOCAL_WORLD_SIZE=8 GROUP_RANK=1 "
                              "GROUP_WORLD_SIZE=2 {} info --format json",
                              PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json json = nlohmann::json::parse(result.out);
  EXPECT_FALSE(json.at("host").get<std::string>().empty());
  EXPECT_EQ(json.at("launcher"), nlohmann::json({{"name", "torchrun"},
                                                 {"rank", 11},
                                                 {"world_size", 16},
                                                 {"local_rank", 3},
                                                 {"local_size", 8},
                                                 {"node", 1},
                                                 {"nodes", 2},
                                                 {"also_present", nlohmann::json::array()},
                                                 {"malformed", nlohmann::json::array()}}));
  // Under an MPI launcher, info runs on one rank only (more refuse: launcher_refusal_test).
  const auto text = run_command(
      fmt::format("env -i SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=1 SLURM_LOCALID=0 SLURM_NODEID=0 "
                  "SLURM_STEP_NUM_NODES=1 SLURM_STEP_TASKS_PER_NODE='1' {} info",
                  PGROUPS_CLI));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("\n  launcher:  slurm: rank 0 of 1, local rank 0 of 1, node 0 of 1\n"), std::string::npos)
      << text.out;
  const auto none = run_command(fmt::format("env -i {} info", PGROUPS_CLI));
  EXPECT_NE(none.out.find("\n  launcher:  none (not started by mpirun, srun or torchrun)\n"), std::string::npos)
      << none.out;
}

// Explain at W = 2^62 answers at once with any --gpus-per-node (the
// closed forms do bounded work; their step counts are checked in topology_test), and a
// kind that no closed form can judge is said not to be judged.
TEST(LocalityCommand, ExplainAtTwoToTheSixtyTwoAnswersWithAnyGpusPerNode) {
  const std::string w = std::to_string(std::int64_t{1} << 62);
  for (const std::string g : {"1", "8", "3", "2305843009213693952", "4611686018427387904"}) {
    const auto result = run_command(fmt::format("{} explain -w {} --rank 5 --gpus-per-node {}", PGROUPS_CLI, w, g));
    if (g == "3") {
      EXPECT_EQ(result.status, 3) << result.err;  // 2^62 does not fill nodes of 3
      continue;
    }
    EXPECT_EQ(result.status, 0) << g << ": " << result.err;
    EXPECT_NE(result.out.find("GPUs per node), local index"), std::string::npos) << result.out;
  }
  const auto mode_2d =
      run_command(fmt::format("{} explain -w {} -t 16 -m 2d --rank 0 --gpus-per-node 8", PGROUPS_CLI, w));
  EXPECT_EQ(mode_2d.status, 0) << mode_2d.err;
  EXPECT_NE(mode_2d.err.find("pgroups: warning: tensor groups cross nodes: 288230376151711744 of 288230376151711744 "
                             "groups of 16 ranks"),
            std::string::npos)
      << mode_2d.err;
  EXPECT_NE(mode_2d.err.find("pgroups: warning: 2d_col groups are not judged by node: above 4194304 ranks only groups "
                             "of consecutive ranks are, and these are not"),
            std::string::npos)
      << mode_2d.err;
}

}  // namespace
}  // namespace pgroups
