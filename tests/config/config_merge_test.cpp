// merge_config: the one rule of settings given beside a file (the CLI's flags, Python's
// keyword arguments) over the file's own.

#include "pgroups/config/config_merge.hpp"

#include <gtest/gtest.h>

#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "support/configs.hpp"

namespace pgroups {
namespace {

ParallelConfig two_and_a_half_d_file() {
  ParallelConfig file = test::preset_config(16, 2, 8, TensorMode::tensor_2p5d, 2);
  return file;
}

TEST(ConfigMerge, AModeOverA2p5dFileDropsTheFilesDepth) {
  ConfigOverrides flags;
  flags.mode = TensorMode::tensor_2d;
  flags.tensor = 4;
  const ParallelConfig merged = merge_config(two_and_a_half_d_file(), flags);
  EXPECT_EQ(merged.tensor_mode, TensorMode::tensor_2d);
  EXPECT_FALSE(merged.depth.has_value());
  EXPECT_EQ(merged.tensor_size, 4);
  EXPECT_EQ(merged.pipeline, 2) << "what is not overridden stays the file's";
  EXPECT_NO_THROW(static_cast<void>(Layout(merged)));
}

TEST(ConfigMerge, A2p5dModeKeepsTheFilesDepthAndAGivenDepthWins) {
  ConfigOverrides flags;
  flags.mode = TensorMode::tensor_2p5d;
  EXPECT_EQ(merge_config(two_and_a_half_d_file(), flags).depth, 2);
  flags.depth = 1;
  EXPECT_EQ(merge_config(two_and_a_half_d_file(), flags).depth, 1);
}

TEST(ConfigMerge, AMeshReplacesTheFilesDimensionsAndKeepsItsGroups) {
  ParallelConfig file;
  file.mesh = MeshConfig{{{"tp", 2}, {"dp", 2}}, {"tp-dp"}};
  ConfigOverrides flags;
  flags.mesh = std::vector<MeshDim>{{"tp", 4}, {"dp", 2}};
  const ParallelConfig merged = merge_config(file, flags);
  EXPECT_EQ(merged.mesh->dims, (std::vector<MeshDim>{{"tp", 4}, {"dp", 2}}));
  EXPECT_EQ(merged.mesh->groups, std::vector<std::string>{"tp-dp"});
  flags.groups = std::vector<std::string>{"tp"};
  EXPECT_EQ(merge_config(file, flags).mesh->groups, std::vector<std::string>{"tp"});
}

TEST(ConfigMerge, GroupsWithoutAnyMeshAreAConfigErrorNamingTheToken) {
  ConfigOverrides flags;
  flags.groups = std::vector<std::string>{"tp-dp"};
  try {
    static_cast<void>(merge_config(ParallelConfig{}, flags));
    FAIL() << "no exception";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("group 'tp-dp' needs a mesh: ", 0), 0U) << error.what();
  }
}

TEST(ConfigMerge, TheRestDimensionIsWhatTheWorldLeavesOver) {
  ConfigOverrides flags;
  flags.world_size = 24;
  flags.mesh = std::vector<MeshDim>{{"tp", 2}, {"dp", 1}, {"pp", 3}};
  flags.rest_dimension = "dp";
  const ParallelConfig merged = merge_config(ParallelConfig{}, flags);
  EXPECT_EQ(merged.mesh->dims, (std::vector<MeshDim>{{"tp", 2}, {"dp", 4}, {"pp", 3}}));
  EXPECT_EQ(Layout(merged).world_size(), 24);
  // Without a world size the dimension keeps its size; the gpus per node travel too.
  flags.world_size.reset();
  flags.gpus_per_node = 8;
  const ParallelConfig unsized = merge_config(ParallelConfig{}, flags);
  EXPECT_EQ(unsized.mesh->dims[1].size, 1);
  EXPECT_EQ(unsized.gpus_per_node, 8);
}

TEST(ConfigMerge, ARestDimensionTheWorldCannotFillIsAConfigErrorNamingBoth) {
  ConfigOverrides flags;
  flags.world_size = 10;
  flags.mesh = std::vector<MeshDim>{{"tp", 4}, {"dp", 1}};
  flags.rest_dimension = "dp";
  try {
    static_cast<void>(merge_config(ParallelConfig{}, flags));
    FAIL() << "no exception";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "world size 10 is not divisible by the product 4 of the sizes of order tp-dp without dp, so no size of "
              "dp fits; give its size or other sizes");
  }
}

TEST(ConfigMerge, NothingGivenLeavesTheFileAsItIs) {
  EXPECT_EQ(describe(merge_config(two_and_a_half_d_file(), {})), describe(two_and_a_half_d_file()));
}

}  // namespace
}  // namespace pgroups
