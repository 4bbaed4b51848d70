// A layout fitted to another world after an elastic restart (pgroups/layout/recovery.hpp,
// resized): the shrinking dimension takes as many whole replicas as fit, more or fewer
// than before, the highest ranks past them are spares, an old rank map does not carry over.

#include <gtest/gtest.h>

#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/mesh_config.hpp"
#include "pgroups/layout/recovery.hpp"
#include "support/configs.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

Layout mesh_layout(const std::string& dims) {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims(dims), {}};
  return Layout(config);
}

TEST(Resized, TheDataDimensionTakesTheWholeReplicasTheNewWorldHoldsAndTheRestAreSpares) {
  const Layout old = mesh_layout("tp=2,dp=4,pp=2");  // replicas of tp x pp = 4 ranks
  const Resize fewer = resized(old, 13);
  EXPECT_EQ(fewer.shrink_dim, "dp");
  EXPECT_EQ(fewer.replica_size, 4);
  EXPECT_EQ(fewer.replicas, 3);
  EXPECT_EQ(fewer.spares, 1);
  EXPECT_EQ(fewer.layout.world_size(), 12);
  EXPECT_EQ(fewer.layout.mesh().dims()[1].size, 3);
  const Resize more = resized(old, 24);
  EXPECT_EQ(more.replicas, 6);
  EXPECT_EQ(more.spares, 0);
  EXPECT_EQ(more.layout.world_size(), 24);
}

TEST(Resized, AnotherShrinkingDimensionAndAPresetsDataDimension) {
  const Resize pipeline = resized(mesh_layout("tp=2,dp=4,pp=2"), 12, "pp");
  EXPECT_EQ(pipeline.replica_size, 8);
  EXPECT_EQ(pipeline.replicas, 1);
  EXPECT_EQ(pipeline.spares, 4);
  const Layout preset(test::preset_config(16, 2, 2, TensorMode::tensor_1d, std::nullopt));
  const Resize data = resized(preset, 10);
  EXPECT_EQ(data.shrink_dim, "data");
  EXPECT_EQ(data.replicas, 2);
  EXPECT_EQ(data.spares, 2);
  EXPECT_EQ(data.layout.world_size(), 8);
  EXPECT_EQ(data.layout.config().pipeline, 2);
  EXPECT_EQ(data.layout.config().tensor_size, 2);
}

TEST(Resized, AnOldRankMapDoesNotCarryOverAndWholeNodesKeepTheirSize) {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims("tp=2,dp=2"), {}};
  config.rank_map = {0, 2, 1, 3};  // tp across the launcher's halves
  config.gpus_per_node = 2;
  const Resize grown = resized(Layout(config), 8);
  EXPECT_TRUE(grown.layout.config().rank_map.empty());
  EXPECT_EQ(grown.layout.config().gpus_per_node, 2);
  config.rank_map.clear();
  config.gpus_per_node = 4;
  EXPECT_EQ(resized(Layout(config), 6).layout.config().gpus_per_node, std::nullopt);  // 6 ranks: no whole nodes of 4
}

TEST(Resized, AWorldBelowOneReplicaNamesBothSizes) {
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)resized(mesh_layout("tp=2,dp=4,pp=2"), 3); }),
            "a world of 3 ranks holds no whole replica of dp: one replica (every dimension but dp) has 4 ranks");
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)resized(mesh_layout("tp=2,dp=4"), 0); }),
            "world size 0 is invalid: a resized job has at least one rank");
  EXPECT_NE(test::message_of<ConfigError>([] {
              (void)resized(mesh_layout("tp=2,dp=4"), 8, "cp");
            }).find("shrinking dimension 'cp' is not a dimension of the mesh"),
            std::string::npos);
}

}  // namespace
}  // namespace pgroups
