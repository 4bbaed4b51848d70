// `pgroups place` and `--rank-map` as a user runs them: the placement's text and JSON, the
// launcher files, and place's JSON given back to plan and explain as the rank map.

#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "support/run_command.hpp"
#include "support/temp_files.hpp"

namespace pgroups {
namespace {

using test::run_command;

// tp spread over two nodes by the mesh order (dp fastest); placed, it stays in each node.
const char* const kCluster = R"([cluster]
gpus_per_node = 4
nodes = ["gpu1", "gpu2"]
)";

TEST(PlaceCommand, TextShowsEachKindsCrossingsForThePlacementAndTheIdentity) {
  test::TempDir dir;
  const auto cluster = dir.write("c.toml", kCluster);
  const auto result =
      run_command(fmt::format("{} place --cluster {} --order dp-tp --dp 2 --tp 4", PGROUPS_CLI, cluster.string()));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("placement: node: tp 4 | rest: dp 2\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("cost 8 (identity 32, 75.0% less)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("kind  size  groups  traffic  node within/cross  cost\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("tp       4       2       16                2/0     0\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("tp       4       2       16                0/2    32\n"), std::string::npos) << result.out;
}

TEST(PlaceCommand, JsonCarriesTheMapTheCostsAndTheCrossings) {
  test::TempDir dir;
  const auto cluster = dir.write("c.toml", kCluster);
  const auto result =
      run_command(fmt::format("{} place --cluster {} --order dp-tp --dp 2 --tp 4 --format json --traffic tp=10",
                              PGROUPS_CLI, cluster.string()));
  ASSERT_EQ(result.status, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json.at("rank_map"), nlohmann::json({0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(json.at("levels"), nlohmann::json({"node"}));
  EXPECT_EQ(json.at("traffic").at("tp"), 10.0);
  EXPECT_EQ(json.at("level_costs").at("node"), 1.0);
  EXPECT_EQ(json.at("crossing").at("tp").at("node"), 0);
  EXPECT_EQ(json.at("identity_crossing").at("tp").at("node"), 2);
  EXPECT_LT(json.at("cost").get<double>(), json.at("identity_cost").get<double>());
}

TEST(PlaceCommand, OneClusterFileServesAJobWithoutTheKindsItsTrafficNames) {
  test::TempDir dir;
  const auto cluster = dir.write("c.toml", std::string(kCluster) + "traffic = {tp = 10, pp = 3}\n");
  const auto json = run_command(
      fmt::format("{} place --cluster {} --order dp-tp --dp 2 --tp 4 --format json", PGROUPS_CLI, cluster.string()));
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out).at("unused_traffic"), nlohmann::json({"pp"}));
  const auto text =
      run_command(fmt::format("{} place --cluster {} --order dp-tp --dp 2 --tp 4", PGROUPS_CLI, cluster.string()));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("note: the cluster's traffic names kind pp, which this plan does not build (not used)"),
            std::string::npos)
      << text.out;
  // The job's own --traffic names its plan: a kind it does not build is still an error.
  const auto strict = run_command(
      fmt::format("{} place --cluster {} --order dp-tp --dp 2 --tp 4 --traffic pp=2", PGROUPS_CLI, cluster.string()));
  EXPECT_EQ(strict.status, 3) << strict.out;
  EXPECT_NE(strict.err.find("the job's traffic names kind 'pp', which the plan does not build; its kinds are"),
            std::string::npos)
      << strict.err;
}

TEST(PlaceCommand, ItsJsonIsARankMapThatPlanApplies) {
  test::TempDir dir;
  const auto cluster = dir.write("c.toml", kCluster);
  const auto placed = run_command(
      fmt::format("{} place --cluster {} --order dp-tp --dp 2 --tp 4 --format json", PGROUPS_CLI, cluster.string()));
  ASSERT_EQ(placed.status, 0) << placed.err;
  const auto map = dir.write("placed.json", placed.out);
  const auto plan = run_command(
      fmt::format("{} plan --order dp-tp --dp 2 --tp 4 --rank-map {} --format json", PGROUPS_CLI, map.string()));
  ASSERT_EQ(plan.status, 0) << plan.err;
  const auto json = nlohmann::json::parse(plan.out);
  EXPECT_EQ(json.at("config").at("rank_map"), nlohmann::json({0, 4, 1, 5, 2, 6, 3, 7}));
  // tp's groups are now the ranks of one node each.
  const auto text = run_command(
      fmt::format("{} plan --order dp-tp --dp 2 --tp 4 --rank-map {} --gpus-per-node 4", PGROUPS_CLI, map.string()));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("[0, 1, 2, 3]"), std::string::npos) << text.out;
  const auto explain = run_command(fmt::format(
      "{} explain --order dp-tp --dp 2 --tp 4 --rank-map {} --rank 4 --format json", PGROUPS_CLI, map.string()));
  ASSERT_EQ(explain.status, 0) << explain.err;
  EXPECT_EQ(nlohmann::json::parse(explain.out).at("kinds").at("tp").at("group"), nlohmann::json({4, 5, 6, 7}));
  EXPECT_EQ(nlohmann::json::parse(explain.out).at("kinds").at("dp").at("local_rank"), 1);
}

TEST(PlaceCommand, WritesAnOpenMpiRankfileAndASlurmHostfile) {
  test::TempDir dir;
  const auto cluster = dir.write("c.toml", kCluster);
  const auto result = run_command(
      fmt::format("{} place --cluster {} --order dp-tp --dp 2 --tp 4 --rankfile {} --hostfile {}", PGROUPS_CLI,
                  cluster.string(), (dir.path() / "rankfile").string(), (dir.path() / "hostfile").string()));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(dir.read("rankfile"),
            "rank 0=gpu1 slot=0\nrank 1=gpu2 slot=0\nrank 2=gpu1 slot=1\nrank 3=gpu2 slot=1\n"
            "rank 4=gpu1 slot=2\nrank 5=gpu2 slot=2\nrank 6=gpu1 slot=3\nrank 7=gpu2 slot=3\n");
  EXPECT_EQ(dir.read("hostfile"), "gpu1\ngpu2\ngpu1\ngpu2\ngpu1\ngpu2\ngpu1\ngpu2\n");
}

TEST(PlaceCommand, RefusesAHostNameALaunchersFileCannotCarryAndWritesNothing) {
  test::TempDir dir;
  const auto cluster = dir.write("c.toml", "[cluster]\ngpus_per_node = 4\nnodes = [\"gpu1\", \"gpu2 slot=9\"]\n");
  for (const char* option : {"--rankfile", "--hostfile"}) {
    const auto result = run_command(fmt::format("{} place --cluster {} --order dp-tp --dp 2 --tp 4 {} {}", PGROUPS_CLI,
                                                cluster.string(), option, (dir.path() / "out").string()));
    EXPECT_EQ(result.status, 3) << result.err;
    EXPECT_NE(result.err.find(fmt::format("{} cannot name node 1's host 'gpu2 slot=9': a host name in a launcher's "
                                          "file is letters, digits",
                                          option)),
              std::string::npos)
        << result.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
  }
}

TEST(PlaceCommand, OptionsOfTheOtherClusterSourceAreRefusedNotIgnored) {
  test::TempDir dir;
  const auto cluster = dir.write("c.toml", kCluster);
  const auto config = dir.write("p.toml", "[parallel]\ngpus_per_node = 2\n");
  const std::string plan = "--order dp-tp --dp 2 --tp 4";
  for (const std::string extra : {"--nodelist 'n[1-2]'", "--level-costs node=1", "--gpus-per-node 4"}) {
    const auto result =
        run_command(fmt::format("{} place --cluster {} {} {}", PGROUPS_CLI, cluster.string(), plan, extra));
    EXPECT_EQ(result.status, 2) << extra << ": " << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
  const auto from_config = run_command(
      fmt::format("{} place --cluster {} --config {} {}", PGROUPS_CLI, cluster.string(), config.string(), plan));
  EXPECT_EQ(from_config.status, 3) << from_config.err;
  EXPECT_NE(from_config.err.find("the configuration's gpus_per_node 2 is not the cluster file's 4"), std::string::npos)
      << from_config.err;
}

TEST(PlaceCommand, ReadsSlurmTopologyWithANodeList) {
  test::TempDir dir;
  const auto topology = dir.write("topology.conf", "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\n");
  const auto result =
      run_command(fmt::format("{} place --slurm-topology {} --nodelist 'n[1-4]' --gpus-per-node 2 --order dp-tp-pp "
                              "--dp 2 --tp 2 --pp 2 --format json",
                              PGROUPS_CLI, topology.string()));
  ASSERT_EQ(result.status, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json.at("levels"), nlohmann::json({"node", "switch1"}));
  EXPECT_EQ(json.at("crossing").at("tp").at("node"), 0);
  const auto env =
      run_command(fmt::format("SLURM_JOB_NODELIST='n[1-4]' {} place --slurm-topology {} --gpus-per-node 2 --order "
                              "tp-dp-pp --dp 2 --tp 2 --pp 2",
                              PGROUPS_CLI, topology.string()));
  EXPECT_EQ(env.status, 0) << env.err;
}

TEST(PlaceCommand, HugeWorldsGiveTheClosedFormAndRefuseJson) {
  test::TempDir dir;
  const auto cluster = dir.write("c.toml",
                                 "[cluster]\ngpus_per_node = 8\nnodes = 576460752303423488\n"
                                 "levels = [{name = \"leaf\", nodes = 32, cost = 4}]\n");
  const std::string mesh = "--mesh tp=8,cp=2,ep=2,dp=9007199254740992,pp=16";
  const auto text = run_command(fmt::format("{} place --cluster {} {}", PGROUPS_CLI, cluster.string(), mesh));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("placement: node: tp 4 x cp 2 | leaf: "), std::string::npos) << text.out;
  const auto json =
      run_command(fmt::format("{} place --cluster {} {} --format json", PGROUPS_CLI, cluster.string(), mesh));
  EXPECT_EQ(json.status, 3);
  EXPECT_NE(json.err.find("is too large for --format json"), std::string::npos) << json.err;
}

TEST(PlaceCommand, BadInputsAreOneLineErrors) {
  test::TempDir dir;
  const auto cluster = dir.write("c.toml", "[cluster]\ngpus_per_node = 4\nnodes = 3\n");
  const auto wrong_size =
      run_command(fmt::format("{} place --cluster {} --mesh tp=4,dp=2", PGROUPS_CLI, cluster.string()));
  EXPECT_EQ(wrong_size.status, 3);
  EXPECT_EQ(wrong_size.err,
            "pgroups: error: the mesh has 8 ranks, but the cluster has 12 GPUs (3 nodes of 4): place "
            "puts one rank on each GPU\n");
  const auto none = run_command(fmt::format("{} place --mesh tp=4,dp=2", PGROUPS_CLI));
  EXPECT_EQ(none.err, "pgroups: error: pgroups place needs a cluster: give --cluster FILE or --slurm-topology FILE\n");
  const auto traffic =
      run_command(fmt::format("{} place --cluster {} --mesh tp=4,dp=3 --traffic tp", PGROUPS_CLI, cluster.string()));
  EXPECT_EQ(traffic.err, "pgroups: error: traffic entry 'tp' must be KIND=BYTES (e.g. tp=8,dp=1)\n");
  const auto no_hosts = run_command(fmt::format("{} place --cluster {} --mesh tp=4,dp=3 --rankfile {}", PGROUPS_CLI,
                                                cluster.string(), (dir.path() / "r").string()));
  EXPECT_NE(no_hosts.err.find("--rankfile needs host names"), std::string::npos) << no_hosts.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r"));
}

// Counts `needle` in the panel of `mode` of an SVG picture.
std::size_t count_in_panel(const std::string& svg, const std::string& mode, const std::string& needle) {
  const std::size_t start = svg.find(fmt::format("<g class=\"panel\" data-mode=\"{}\"", mode));
  if (start == std::string::npos) return 0;
  const std::size_t end = std::min(svg.find("<g class=\"panel\"", start + 1), svg.size());
  std::size_t count = 0;
  for (std::size_t at = svg.find(needle, start); at != std::string::npos && at < end; at = svg.find(needle, at + 1))
    ++count;
  return count;
}

TEST(PlaceCommand, ThePictureDrawsTheLevelsAndMarksTheGroupsCrossingEach) {
  test::TempDir dir;
  const auto cluster = dir.write(
      "s.toml", "[cluster]\ngpus_per_node = 2\nnodes = 8\nlevels = [{name = \"switch\", nodes = 2, cost = 4}]\n");
  const auto result = run_command(fmt::format("{} place --cluster {} --order dp-tp-pp --dp 4 --tp 2 --pp 2 --svg {}",
                                              PGROUPS_CLI, cluster.string(), (dir.path() / "p.svg").string()));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("placement: node: tp 2 | switch: dp 2 | rest: dp 2 x pp 2"), std::string::npos)
      << result.out;
  const std::string svg = dir.read("p.svg");
  // Each panel outlines the nodes and, around them, the switches.
  EXPECT_EQ(count_in_panel(svg, "tp", "<path class=\"level\" data-level=\"switch\""), 1U);
  EXPECT_EQ(count_in_panel(svg, "tp", "<path class=\"node\""), 1U);
  // tp stays inside the nodes, dp's groups (4 ranks over 2 switches) all cross the switch level.
  EXPECT_EQ(count_in_panel(svg, "tp", "class=\"crossing\" data-level=\"switch\""), 0U);
  EXPECT_EQ(count_in_panel(svg, "dp", "class=\"crossing\" data-level=\"switch\""), 16U);
  EXPECT_EQ(count_in_panel(svg, "pp", "class=\"crossing\" data-level=\"switch\""), 16U);
  EXPECT_EQ(count_in_panel(svg, "tp", "class=\"across\""), 0U);  // no tensor group across nodes
}

TEST(RankMapOption, BadMapsAreOneLineErrors) {
  test::TempDir dir;
  const auto duplicate = dir.write("d.json", "[0, 1, 1, 2]");
  const auto result =
      run_command(fmt::format("{} plan --mesh tp=2,dp=2 --rank-map {}", PGROUPS_CLI, duplicate.string()));
  EXPECT_EQ(result.status, 3);
  EXPECT_EQ(result.err,
            "pgroups: error: rank map entries 1 and 2 are both launcher rank 1: the map must be a "
            "permutation of the launcher ranks, each once\n");
  const auto order = dir.write("o.json", "[1, 0, 3, 2]");
  const auto broken = run_command(fmt::format("{} plan --mesh tp=2,dp=2 --rank-map {}", PGROUPS_CLI, order.string()));
  EXPECT_EQ(broken.status, 3);
  EXPECT_NE(broken.err.find("rank map breaks the order of kind 'tp'"), std::string::npos) << broken.err;
  const auto missing = run_command(
      fmt::format("{} plan --mesh tp=2,dp=2 --rank-map {}", PGROUPS_CLI, (dir.path() / "none.json").string()));
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
  const auto config =
      dir.write("c.toml", "[mesh]\norder = \"tp-dp\"\ntp = 2\ndp = 2\n[parallel]\nrank_map = [0, 2, 1, 3]\n");
  const auto from_file = run_command(fmt::format("{} plan --config {} --format json", PGROUPS_CLI, config.string()));
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  EXPECT_EQ(nlohmann::json::parse(from_file.out).at("config").at("rank_map"), nlohmann::json({0, 2, 1, 3}));
}

}  // namespace
}  // namespace pgroups
