// `pgroups verify` with a named mesh, under mpirun, as a user runs it: for every golden
// mesh of tests/data/golden-mesh up to 16 ranks (and one of 24), the live communicators
// it reports, keyed by group token, hold exactly Megatron-LM's groups and local ranks;
// the issue's own command reports "ok": true; ranks given different meshes end with the
// mismatch status.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/golden.hpp"
#include "support/run_command.hpp"

namespace pgroups {
namespace {

using test::run_command;

// `--mesh tp=2,dp=2,pp=2 --group tp --group tp-dp ...` for a golden-mesh file: its order
// with the sizes, one --group per token.
std::string mesh_arguments(const nlohmann::json& golden) {
  const nlohmann::json& config = golden.at("config");
  std::string mesh;
  const std::string order = config.at("order").get<std::string>();
  std::size_t start = 0;
  while (start <= order.size()) {
    const std::size_t end = std::min(order.find('-', start), order.size());
    const std::string name = order.substr(start, end - start);
    mesh += fmt::format("{}{}={}", mesh.empty() ? "" : ",", name, config.at("sizes").at(name).get<int>());
    start = end + 1;
  }
  std::string arguments = "--mesh " + mesh;
  for (const auto& [token, _] : golden.at("modes").items()) arguments += " --group " + token;
  return arguments;
}

// The report's groups, local ranks and sizes of every golden token; groups compare as
// sets (Megatron lists them in its own order).
void expect_report_matches_golden_mesh(const nlohmann::json& report, const nlohmann::json& golden) {
  EXPECT_EQ(report.at("ok"), true);
  ASSERT_EQ(report.at("modes").size(), golden.at("modes").size());
  for (const auto& [token, expected] : golden.at("modes").items()) {
    SCOPED_TRACE(token);
    const nlohmann::json& actual = report.at("modes").at(token);
    EXPECT_EQ(actual.at("ok"), true);
    using Groups = std::vector<std::vector<std::int64_t>>;
    EXPECT_EQ(test::sorted_groups(actual.at("groups").get<Groups>()),
              test::sorted_groups(expected.at("groups").get<Groups>()));
    EXPECT_EQ(actual.at("local_rank"), expected.at("local_rank"));
    EXPECT_EQ(actual.at("world_size"), expected.at("world_size"));
  }
}

std::vector<std::filesystem::path> verified_golden_meshes() {
  std::vector<std::filesystem::path> files = test::golden_files_up_to("golden-mesh", 16);
  files.push_back(test::data_dir() / "golden-mesh" / "w24_tp4-cp1-ep1-dp3-pp2__tp-dp-pp.json");
  return files;
}

class VerifyGoldenMesh : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(VerifyGoldenMesh, JsonReportsMegatronsGroupsAsLiveCommunicators) {
  const nlohmann::json golden = test::load_json(GetParam());
  const auto w = golden.at("config").at("world_size").get<std::int64_t>();
  const auto result = run_command(test::pgroups_on_ranks(w, "verify " + mesh_arguments(golden) + " --format json"));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report.at("config").at("world_size"), w);
  expect_report_matches_golden_mesh(report, golden);
}

INSTANTIATE_TEST_SUITE_P(GoldenMeshFiles, VerifyGoldenMesh, ::testing::ValuesIn(verified_golden_meshes()),
                         test::test_name);

TEST(VerifyMesh, TheIssuesCommandReportsOkWithMegatronsGroups) {
  const auto result = run_command(test::pgroups_on_ranks(
      8, "verify --mesh tp=2,dp=2,pp=2 --group tp --group dp --group pp --group tp-dp --format json"));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report.at("ok"), true);
  // Megatron-LM's RankGenerator for tp=2, dp=2, pp=2 (order tp-dp-pp, tp fastest).
  using Groups = std::vector<std::vector<std::int64_t>>;
  EXPECT_EQ(report.at("modes").at("tp").at("groups").get<Groups>(), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(report.at("modes").at("dp").at("groups").get<Groups>(), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(report.at("modes").at("pp").at("groups").get<Groups>(), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(report.at("modes").at("tp-dp").at("groups").get<Groups>(), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(VerifyMesh, ARankMapMovesEveryLiveCommunicatorOntoTheMappedRanks) {
  // The rank map place proposes for tp's groups to stay in nodes of 4 when dp runs fastest:
  // checked live, every communicator against the mapped layout, on every strategy.
  const std::filesystem::path map =
      std::filesystem::temp_directory_path() / ("pgroups_rank_map_" + std::to_string(::getpid()) + ".json");
  std::ofstream(map) << R"({"rank_map": [0, 4, 1, 5, 2, 6, 3, 7]})";
  for (const char* strategy : {"create_group", "comm_split"}) {
    const auto result = run_command(test::pgroups_on_ranks(
        8, fmt::format("verify --order dp-tp --dp 2 --tp 4 --group tp --group dp --group tp-dp --rank-map {} "
                       "--strategy {} --format json",
                       map.string(), strategy)));
    ASSERT_EQ(result.status, 0) << result.err;
    const nlohmann::json report = nlohmann::json::parse(result.out);
    EXPECT_EQ(report.at("ok"), true) << strategy;
    using Groups = std::vector<std::vector<std::int64_t>>;
    EXPECT_EQ(report.at("modes").at("tp").at("groups").get<Groups>(), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
    EXPECT_EQ(report.at("modes").at("dp").at("groups").get<Groups>(), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
    EXPECT_EQ(report.at("modes").at("tp").at("local_rank"), nlohmann::json({0, 1, 2, 3, 0, 1, 2, 3}));
    EXPECT_EQ(report.at("config").at("rank_map"), nlohmann::json({0, 4, 1, 5, 2, 6, 3, 7}));
  }
  // Ranks without the map: the agreement refuses the job on every rank.
  const auto mixed =
      run_command(fmt::format("{} -np 4 {} verify --order dp-tp --dp 2 --tp 4 --rank-map {} : -np 4 {} "
                              "verify --order dp-tp --dp 2 --tp 4",
                              PGROUPS_MPIEXEC, PGROUPS_CLI, map.string(), PGROUPS_CLI));
  EXPECT_EQ(mixed.status, 7) << mixed.err;
  EXPECT_NE(mixed.err.find("rank_map=0,4,1,5,2,6,3,7"), std::string::npos) << mixed.err;
  std::filesystem::remove(map);
}

TEST(VerifyMesh, EmbeddingGroupsLeaveNonMembersOut) {
  const auto result = run_command(
      test::pgroups_on_ranks(4, "verify --mesh pp=4 --group pp --group embd --group pos_embd --format json"));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report.at("ok"), true);
  using Groups = std::vector<std::vector<std::int64_t>>;
  EXPECT_EQ(report.at("modes").at("embd").at("groups").get<Groups>(), (Groups{{0, 3}}));
  EXPECT_EQ(report.at("modes").at("pos_embd").at("groups").get<Groups>(), (Groups{{0}}));
  // Ranks outside every group: local rank -1, size 0.
  EXPECT_EQ(report.at("modes").at("embd").at("local_rank"), nlohmann::json({0, -1, -1, 1}));
  EXPECT_EQ(report.at("modes").at("pos_embd").at("world_size"), nlohmann::json({1, 0, 0, 0}));
}

TEST(VerifyMesh, RanksGivenDifferentMeshesEndWithTheMismatchStatus) {
  // The same world and sizes, in another order on the last four ranks.
  const auto result =
      run_command(fmt::format("{} -np 4 {} verify --mesh tp=2,dp=4 --group tp : -np 4 {} verify "
                              "--mesh dp=4,tp=2 --group tp",
                              PGROUPS_MPIEXEC, PGROUPS_CLI, PGROUPS_CLI));
  EXPECT_EQ(result.status, 7) << result.err;
  EXPECT_NE(result.err.find("configuration mismatch across 8 ranks: ranks 0-3 hold"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("mesh=tp=2,dp=4 groups=tp "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("mesh=dp=4,tp=2 groups=tp "), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(VerifyMesh, AMeshWhoseProductIsNotTheWorldIsAConfigError) {
  const auto result = run_command(test::pgroups_on_ranks(4, "verify --mesh tp=2,dp=4 --group tp"));
  EXPECT_EQ(result.status, 3) << result.err;
  EXPECT_NE(result.err.find("8"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("4"), std::string::npos) << result.err;
}

TEST(VerifyMesh, AndBenchTimesTheMeshsCommunicatorsWithEveryStrategy) {
  const auto result =
      run_command(fmt::format("{} -np 4 {} bench --mesh tp=2,dp=2 --group tp --group tp-dp "
                              "--repeats 1 --format json",
                              PGROUPS_MPIEXEC, PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const nlohmann::json report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report.at("world_size"), 4);
  EXPECT_EQ(report.at("modes"), 3);  // the duplicate of the world and the two tokens
  for (const char* strategy : {"comm_split", "create_group", "per_group", "comm_create", "split"}) {
    EXPECT_GT(report.at("strategies").at(strategy).at("min_s").get<double>(), 0.0) << strategy;
  }
}

}  // namespace
}  // namespace pgroups
