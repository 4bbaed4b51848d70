// Named meshes reproduce Megatron-LM's RankGenerator groups for every token.

#include <gtest/gtest.h>

#include <sstream>

#include "pgroups/layout/mesh.hpp"
#include "support/golden.hpp"

namespace pgroups {
namespace {

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream stream(text);
  for (std::string name; std::getline(stream, name, '-');) names.push_back(name);
  return names;
}

class MegatronGolden : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(MegatronGolden, EveryTokenGivesTheSameGroupsAndLocalRanks) {
  const nlohmann::json golden = test::load_json(GetParam());
  const auto& config = golden.at("config");
  std::vector<MeshDim> dims;
  for (const std::string& name : split_names(config.at("order").get<std::string>())) {
    dims.push_back({name, config.at("sizes").at(name).get<std::int64_t>()});
  }
  const Mesh mesh(dims);
  ASSERT_EQ(mesh.size(), config.at("world_size").get<std::int64_t>());
  for (const auto& [token, expected] : golden.at("modes").items()) {
    SCOPED_TRACE(token);
    std::vector<std::string_view> names;
    const auto parts = split_names(token);
    for (const std::string& part : parts) names.emplace_back(part);
    const DimMask varying = mesh.mask_of(names);
    EXPECT_EQ(test::sorted_groups(mesh.groups(varying)),
              test::sorted_groups(expected.at("groups").get<std::vector<std::vector<std::int64_t>>>()));
    const auto local = expected.at("local_rank").get<std::vector<std::int64_t>>();
    const auto sizes = expected.at("world_size").get<std::vector<std::int64_t>>();
    for (std::int64_t rank = 0; rank < mesh.size(); ++rank) {
      EXPECT_EQ(mesh.local_rank(rank, varying), local[static_cast<std::size_t>(rank)]);
      EXPECT_EQ(mesh.group_size(varying), sizes[static_cast<std::size_t>(rank)]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenMeshFiles, MegatronGolden, ::testing::ValuesIn(test::golden_files("golden-mesh")),
                         test::test_name);

}  // namespace
}  // namespace pgroups
