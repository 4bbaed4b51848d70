// ParallelContext built from a named mesh (ParallelConfig::mesh): one communicator per
// group kind, asked by name. Every golden-mesh file of tests/data/golden-mesh whose world
// is this job's is built live with each creation strategy, and each kind's communicator
// must hold exactly Megatron-LM's groups and local ranks; Megatron's embedding groups
// give non-members no communicator; ranks holding different meshes fail together.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "golden_group_check.hpp"
#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "support/error_message.hpp"
#include "support/golden.hpp"

namespace pgroups {
namespace {

// The mesh of a golden-mesh file: its order (fastest first) with the sizes, and one group
// kind per token of the file.
ParallelConfig mesh_config_from_golden(const nlohmann::json& golden) {
  const nlohmann::json& config = golden.at("config");
  MeshConfig mesh;
  const std::string order = config.at("order").get<std::string>();
  for (const std::string_view name : split_group_token(order)) {
    mesh.dims.push_back({std::string(name), config.at("sizes").at(std::string(name)).get<std::int64_t>()});
  }
  for (const auto& [token, _] : golden.at("modes").items()) mesh.groups.push_back(token);
  ParallelConfig result;
  result.mesh = mesh;
  return result;
}

using MeshCase = std::tuple<std::filesystem::path, CreationStrategy>;

class LiveGoldenMesh : public ::testing::TestWithParam<MeshCase> {};

TEST_P(LiveGoldenMesh, EveryKindsCommunicatorHoldsMegatronsGroupsAndLocalRanks) {
  const auto& [path, strategy] = GetParam();
  const nlohmann::json golden = test::load_json(path);
  if (golden.at("config").at("world_size").get<int>() != test::world_size()) {
    GTEST_SKIP() << "for a world of " << golden.at("config").at("world_size") << " ranks";
  }
  const ParallelConfig config = mesh_config_from_golden(golden);
  ContextOptions options;
  options.strategy = strategy;
  const ParallelContext context(config, MPI_COMM_WORLD, options);
  EXPECT_EQ(context.kind_names(), config.mesh->groups);
  EXPECT_TRUE(context.modes().empty());

  for (const auto& [token, expected] : golden.at("modes").items()) {
    SCOPED_TRACE(token);
    const test::Observed seen = test::expect_golden_group(context, token, expected);
    const std::int64_t n = seen.size;
    EXPECT_EQ(context.next_rank(token),
              (Neighbour{seen.members[static_cast<std::size_t>((seen.rank + 1) % n)], (seen.rank + 1) % n}));
    // The dimensions of a token in another order name the same kind.
    std::vector<std::string_view> dims = split_group_token(token);
    std::reverse(dims.begin(), dims.end());
    std::string reversed;
    for (const std::string_view dim : dims) reversed += fmt::format("{}{}", reversed.empty() ? "" : "-", dim);
    EXPECT_EQ(context.get_group(reversed), context.get_group(token)) << reversed;
  }
}

std::vector<std::filesystem::path> small_golden_meshes() { return test::golden_files_up_to("golden-mesh", 32); }

std::string mesh_case_name(const ::testing::TestParamInfo<MeshCase>& param) {
  const std::string file = test::test_name({std::get<0>(param.param), param.index});
  return file + "_" + std::string(strategy_name(std::get<1>(param.param)));
}

INSTANTIATE_TEST_SUITE_P(GoldenMeshFiles, LiveGoldenMesh,
                         ::testing::Combine(::testing::ValuesIn(small_golden_meshes()),
                                            ::testing::ValuesIn(kAllCreationStrategies)),
                         mesh_case_name);

// A pipeline over the whole world with Megatron's embedding groups: the first and last
// stage (embd), the first only (pos_embd).
ParallelConfig pipeline_with_embeddings() {
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"pp", test::world_size()}}, .groups = {"pp", "embd", "pos_embd"}};
  return config;
}

class EachStrategy : public ::testing::TestWithParam<CreationStrategy> {};

TEST_P(EachStrategy, EmbeddingGroupsHoldTheEndStagesAndNonMembersGetNoCommunicator) {
  ContextOptions options;
  options.strategy = GetParam();
  const ParallelContext context(pipeline_with_embeddings(), MPI_COMM_WORLD, options);
  const std::int64_t me = test::world_rank();
  const std::int64_t last = test::world_size() - 1;
  const bool end_stage = me == 0 || me == last;
  EXPECT_EQ(context.is_member("embd"), end_stage);
  EXPECT_EQ(context.is_member("pos_embd"), me == 0);
  EXPECT_TRUE(context.is_member("pp"));
  if (end_stage) {
    const test::Observed seen = test::observe(context.get_group("embd").mpi(), static_cast<int>(me));
    const std::vector<std::int64_t> ends =
        last == 0 ? std::vector<std::int64_t>{0} : std::vector<std::int64_t>{0, last};
    EXPECT_EQ(seen.members, ends);
    EXPECT_EQ(context.ranks_in_group("embd"), seen.members);
  } else {
    const std::string not_a_member = fmt::format(
        "rank {} is in no group of kind embd: it is a partial kind, and this rank has no communicator of it (ask "
        "is_member first)",
        me);
    EXPECT_EQ(test::message_of<StateError>([&] { (void)context.get_group("embd"); }), not_a_member);
    EXPECT_EQ(test::message_of<StateError>([&] { (void)context.local_rank("embd"); }), not_a_member);
  }
  if (me == 0) {
    EXPECT_EQ(context.world_size("pos_embd"), 1);
  } else {
    EXPECT_EQ(test::message_of<StateError>([&] { (void)context.world_size("pos_embd"); }),
              fmt::format("rank {} is in no group of kind pos_embd: it is a partial kind, and this rank has no "
                          "communicator of it (ask is_member first)",
                          me));
  }
  // The pipeline queries read the mesh's pp dimension.
  EXPECT_EQ(context.is_pipeline_first_stage(), me == 0);
  EXPECT_EQ(context.is_pipeline_last_stage(), me == last);
  EXPECT_GE(context.creation_seconds("embd"), 0.0);
}

std::string strategy_name_of(const ::testing::TestParamInfo<CreationStrategy>& param) {
  return std::string(strategy_name(param.param));
}

INSTANTIATE_TEST_SUITE_P(Strategies, EachStrategy, ::testing::ValuesIn(kAllCreationStrategies), strategy_name_of);

TEST(ParallelContextMesh, AnUnknownKindNamesTheKindsAndTheClosest) {
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"tp", 1}, {"dp", test::world_size()}}, .groups = {"tp", "dp", "tp-dp"}};
  const ParallelContext context(config, MPI_COMM_WORLD);
  EXPECT_EQ(context.get_group("dp-tp"), context.get_group("tp-dp"));
  try {
    (void)context.get_group("dq");
    FAIL() << "no exception";
  } catch (const StateError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'dq'"), std::string::npos) << message;
    EXPECT_NE(message.find("tp, dp, tp-dp"), std::string::npos) << message;
  }
  EXPECT_FALSE(context.is_initialized("cp"));
  EXPECT_TRUE(context.is_initialized("dp-tp"));
  // No pp dimension: the pipeline is this rank alone, as in Megatron-LM.
  EXPECT_EQ(context.world_size("pp"), 1);
  EXPECT_EQ(context.local_rank("pp"), 0);
  EXPECT_TRUE(context.is_pipeline_first_stage());
  EXPECT_TRUE(context.is_pipeline_last_stage());
}

TEST(ParallelContextMesh, AMeshWhoseProductIsNotTheWorldIsTheSameConfigErrorEverywhere) {
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"tp", 2}, {"dp", test::world_size()}}, .groups = {"tp"}};
  std::string message;
  try {
    const ParallelContext context(config, MPI_COMM_WORLD);
  } catch (const ConfigError& error) {
    message = error.what();
  }
  EXPECT_FALSE(message.empty());
  EXPECT_NE(message.find(std::to_string(test::world_size())), std::string::npos) << message;
  EXPECT_TRUE(test::same_everywhere(MPI_COMM_WORLD, static_cast<std::int64_t>(message.size())));
}

TEST(ParallelContextMesh, RanksHoldingDifferentMeshesThrowMismatchErrorTogether) {
  if (test::world_size() < 2) GTEST_SKIP() << "needs two ranks";
  // The same world and sizes, but rank 0 names its dimension differently.
  const std::string name = test::world_rank() == 0 ? "dp" : "cp";
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{name, test::world_size()}}, .groups = {name}};
  std::string message;
  try {
    const ParallelContext context(config, MPI_COMM_WORLD);
  } catch (const MismatchError& error) {
    message = error.what();
  }
  const std::int64_t w = test::world_size();
  EXPECT_EQ(message.rfind(fmt::format("configuration mismatch across {} ranks: rank 0 holds '", w), 0), 0U) << message;
  EXPECT_NE(message.find(fmt::format("mesh=dp={} groups=dp ", w)), std::string::npos) << message;
  EXPECT_NE(message.find(fmt::format("mesh=cp={} groups=cp ", w)), std::string::npos) << message;
}

}  // namespace
}  // namespace pgroups
