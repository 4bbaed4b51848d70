// `pgroups plan` and `explain` with named meshes, as a user runs them: every golden-mesh
// file through both spellings (--mesh and Megatron's --order), config files with a
// [mesh] table, and the messages of the mesh rules.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>

#include "support/golden.hpp"
#include "support/run_command.hpp"
#include "support/temp_files.hpp"

namespace pgroups {
namespace {

using test::run_command;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::string group_flags(const nlohmann::json& golden) {
  std::string flags;
  for (const auto& [token, _] : golden.at("modes").items()) flags += " --group " + token;
  return flags;
}

// Field by field: config (world size, order, sizes of the names in the order, groups),
// then per token the groups in Megatron's order, local ranks and group sizes.
void expect_mesh_plan_equals_golden(const nlohmann::json& plan, const nlohmann::json& golden) {
  const auto& config = golden.at("config");
  EXPECT_EQ(plan.at("config").at("world_size"), config.at("world_size"));
  const std::string order = config.at("order").get<std::string>();
  EXPECT_EQ(plan.at("config").at("mesh").at("order"), order);
  const auto& sizes = plan.at("config").at("mesh").at("sizes");
  EXPECT_EQ(sizes.size(), split(order, '-').size());
  for (const std::string& name : split(order, '-')) EXPECT_EQ(sizes.at(name), config.at("sizes").at(name)) << name;
  std::vector<std::string> tokens;
  for (const auto& [token, _] : golden.at("modes").items()) tokens.push_back(token);
  EXPECT_EQ(plan.at("config").at("groups").get<std::vector<std::string>>(), tokens);
  ASSERT_EQ(plan.at("modes").size(), golden.at("modes").size());
  for (const auto& [token, expected] : golden.at("modes").items()) {
    SCOPED_TRACE(token);
    const auto& actual = plan.at("kinds").at(token);
    EXPECT_EQ(actual.at("groups"), expected.at("groups"));
    EXPECT_EQ(actual.at("local_rank"), expected.at("local_rank"));
    EXPECT_EQ(actual.at("group_size"), expected.at("world_size"));
  }
}

class MeshPlanGolden : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(MeshPlanGolden, MeshFlagJsonEqualsMegatronsGroups) {
  const nlohmann::json golden = test::load_json(GetParam());
  const auto& config = golden.at("config");
  std::string mesh;
  for (const std::string& name : split(config.at("order").get<std::string>(), '-')) {
    mesh += fmt::format("{}{}={}", mesh.empty() ? "" : ",", name, config.at("sizes").at(name).get<long>());
  }
  const auto result =
      run_command(fmt::format("{} plan --mesh {}{} --format json", PGROUPS_CLI, mesh, group_flags(golden)));
  ASSERT_EQ(result.status, 0) << result.err;
  expect_mesh_plan_equals_golden(nlohmann::json::parse(result.out), golden);
}

TEST_P(MeshPlanGolden, MegatronOrderAndSizeFlagsGiveTheSamePlan) {
  const nlohmann::json golden = test::load_json(GetParam());
  const auto& config = golden.at("config");
  std::string sizes;
  for (const auto& [name, size] : config.at("sizes").items()) sizes += fmt::format(" --{} {}", name, size.get<long>());
  const auto result = run_command(fmt::format("{} plan --order {}{}{} --format json", PGROUPS_CLI,
                                              config.at("order").get<std::string>(), sizes, group_flags(golden)));
  ASSERT_EQ(result.status, 0) << result.err;
  expect_mesh_plan_equals_golden(nlohmann::json::parse(result.out), golden);
}

INSTANTIATE_TEST_SUITE_P(GoldenMeshFiles, MeshPlanGolden, ::testing::ValuesIn(test::golden_files("golden-mesh")),
                         test::test_name);

// ---- Other spellings -----------------------------------------------------------------

TEST(MeshPlan, ConfigFilesWithAMeshTableGiveTheSamePlanAsTheFlags) {
  const test::TempDir files;
  const auto flags = run_command(fmt::format(
      "{} plan --mesh tp=2,cp=2,dp=2,pp=2 --group tp --group dp-cp --group embd --format json", PGROUPS_CLI));
  ASSERT_EQ(flags.status, 0) << flags.err;
  const auto toml = files.write("mesh.toml",
                                "[mesh]\norder = \"tp-cp-dp-pp\"\ntp = 2\ncp = 2\ndp = 2\npp = 2\n"
                                "groups = [\"tp\", \"dp-cp\", \"embd\"]\n");
  const auto json = files.write("mesh.json",
                                R"({"mesh": {"order": "tp-cp-dp-pp", "tp": 2, "cp": 2, "dp": 2, "pp": 2,
                                            "groups": ["tp", "dp-cp", "embd"]}})");
  const auto python = files.write("mesh.py",
                                  "mesh = dict(order='tp-cp-dp-pp', tp=2, cp=2, dp=2, pp=2,\n"
                                  "            groups=['tp', 'dp-cp', 'embd'])\n");
  for (const auto& path : {toml, json, python}) {
    SCOPED_TRACE(path.string());
    const auto file = run_command(fmt::format("{} plan --config {} --format json", PGROUPS_CLI, path.string()));
    EXPECT_EQ(file.status, 0) << file.err;
    EXPECT_EQ(nlohmann::json::parse(file.out), nlohmann::json::parse(flags.out));
  }
}

TEST(MeshPlan, GroupFlagsReplaceTheFilesGroupsAndCommasSeparateTokens) {
  const test::TempDir files;
  const auto toml = files.write("groups.toml", "[mesh]\norder = \"tp-dp\"\ntp = 2\ndp = 2\ngroups = [\"tp\"]\n");
  const auto result =
      run_command(fmt::format("{} plan --config {} --group dp,tp-dp --format json", PGROUPS_CLI, toml.string()));
  ASSERT_EQ(result.status, 0) << result.err;
  const auto plan = nlohmann::json::parse(result.out);
  EXPECT_EQ(plan.at("config").at("groups"), nlohmann::json({"dp", "tp-dp"}));
  EXPECT_EQ(plan.at("kinds").at("dp").at("groups"), nlohmann::json({{0, 2}, {1, 3}}));
}

TEST(MeshPlan, MegatronOrderDerivesTheDataParallelSizeFromTheWorldSize) {
  const auto result = run_command(fmt::format("{} plan -w 16 --tp 2 --pp 2 --group dp --format json", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const auto plan = nlohmann::json::parse(result.out);
  EXPECT_EQ(plan.at("config").at("mesh").at("order"), "tp-cp-ep-dp-pp");
  EXPECT_EQ(plan.at("config").at("mesh").at("sizes").at("dp"), 4);
  EXPECT_EQ(plan.at("kinds").at("dp").at("groups").at(0), nlohmann::json({0, 2, 4, 6}));
}

TEST(MeshPlan, EmbeddingGroupsListOnlyTheirMembersAndNullForOthers) {
  const auto result =
      run_command(fmt::format("{} plan --mesh tp=2,pp=3 --group embd --group pos_embd --format json", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  const auto plan = nlohmann::json::parse(result.out);
  EXPECT_EQ(plan.at("kinds").at("embd").at("groups"), nlohmann::json({{0, 4}, {1, 5}}));
  EXPECT_EQ(plan.at("kinds").at("embd").at("local_rank"), nlohmann::json({0, 0, nullptr, nullptr, 1, 1}));
  EXPECT_EQ(plan.at("kinds").at("pos_embd").at("group_size"),
            nlohmann::json({1, 1, nullptr, nullptr, nullptr, nullptr}));
}

TEST(MeshPlan, TextNamesTheMeshAndEveryGroupKind) {
  const auto result = run_command(fmt::format("{} plan --mesh tp=2,dp=2,pp=2 --group tp-dp --group embd", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("world size 8 = tp 2 x dp 2 x pp 2 (order tp-dp-pp, first fastest)"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("tp-dp                         2          4  [0, 1, 2, 3]"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("embd                          4          2  [0, 4]"), std::string::npos) << result.out;
}

TEST(MeshExplain, OneRanksGroupsAndNonMembership) {
  const auto text =
      run_command(fmt::format("{} explain --mesh tp=2,dp=2,pp=2 --group tp-dp --group pos_embd -r 5", PGROUPS_CLI));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("coordinates: pp=1/2 dp=0/2 tp=1/2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("tp-dp                           1            4  [4, 5, 6, 7]"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("pos_embd                        -            -  not a member"), std::string::npos)
      << text.out;
  const auto json = run_command(
      fmt::format("{} explain --mesh tp=2,dp=2,pp=2 --group dp-tp --group pos_embd -r 5 --format json", PGROUPS_CLI));
  ASSERT_EQ(json.status, 0) << json.err;
  const auto plan = nlohmann::json::parse(json.out);
  EXPECT_EQ(plan.at("kinds").at("dp-tp").at("group"), nlohmann::json({4, 5, 6, 7}));
  EXPECT_EQ(plan.at("kinds").at("pos_embd").at("member"), false);
  EXPECT_EQ(plan.at("coordinates").at("pp"), 1);
}

// ---- Errors ----------------------------------------------------------------------------

struct Rejection {
  std::string flags;
  std::string message;
};

// Keeps CTest's test names readable.
void PrintTo(const Rejection& rejection, std::ostream* out) { *out << rejection.flags; }

class MeshPlanRejects : public ::testing::TestWithParam<Rejection> {};

TEST_P(MeshPlanRejects, WithTheConfigErrorStatusAndTheRule) {
  const auto result = run_command(fmt::format("{} plan {}", PGROUPS_CLI, GetParam().flags));
  EXPECT_EQ(result.status, 3) << result.err;
  EXPECT_TRUE(result.out.empty());
  EXPECT_EQ(result.err, "pgroups: error: " + GetParam().message + "\n");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MeshPlanRejects,
    ::testing::Values(
        Rejection{"--mesh tp=2,dp=2,pp=2 --group tp --group tpp-dp",
                  "unknown dimension 'tpp' in group 'tpp-dp'; the mesh has tp, dp, pp (did you mean tp?)"},
        Rejection{"--mesh tp=2,cp=2,dp=4,pp=2 -w 16 --group tp",
                  "world size 16 does not match the mesh tp=2,cp=2,dp=4,pp=2, whose sizes multiply to 32"},
        Rejection{"--order tp-dp --tp 2 --dp 2 -w 8",
                  "world size 8 does not match the mesh tp=2,dp=2, whose sizes multiply to 4"},
        Rejection{"-w 8 --group tp",
                  "group 'tp' needs a mesh: groups are the group kinds of a mesh (give --mesh NAME=SIZE,... or "
                  "--order with sizes, or a [mesh] table in the config file); presets have fixed modes"},
        Rejection{"--mesh tp=2 --order tp-dp",
                  "--mesh tp=2 cannot be combined with --order: both describe the mesh; give --mesh NAME=SIZE,... or "
                  "--order with --tp/--cp/--ep/--dp/--pp"},
        Rejection{"--mesh tp=2,dp=4 -p 2",
                  "a mesh cannot be combined with pipeline=2: the mesh's dimensions replace pipeline, tensor, mode "
                  "and depth"},
        Rejection{"--mesh tp=2,dp", "mesh item 'dp' in 'tp=2,dp' is not NAME=SIZE (e.g. tp=2,dp=4,pp=2)"},
        Rejection{"--order tp-dp --pp 2",
                  "size pp=2 is given, but 'pp' is not in the order 'tp-dp'; a name missing from the order must have "
                  "size 1"},
        Rejection{"-w 10 --order tp-dp-pp --tp 2 --pp 3",
                  "world size 10 is not divisible by the product 6 of the sizes of order tp-dp-pp without dp, so no "
                  "size of dp fits; give its size or other sizes"},
        Rejection{"--mesh tp=2,dp=2 --group embd",
                  "group 'embd' needs a 'pp' dimension in the mesh, which has tp, dp"}),
    [](const ::testing::TestParamInfo<Rejection>& param) { return std::to_string(param.index); });

}  // namespace
}  // namespace pgroups
