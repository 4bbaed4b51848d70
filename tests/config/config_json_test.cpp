// docs/reference/spec.md §4's "config" object (pgroups/config/config_json.hpp): the one rendering that the
// plan and explain JSON and Python's Plan.config share.

#include "pgroups/config/config_json.hpp"

#include <gtest/gtest.h>

namespace pgroups {
namespace {

TEST(ConfigJson, PresetHasDepthOnlyFor2p5dAndLegacyOnlyWhenSet) {
  ParallelConfig config;
  config.world_size = 16;
  config.pipeline = 2;
  config.tensor_size = 8;
  config.tensor_mode = TensorMode::tensor_2p5d;
  config.depth = 2;
  EXPECT_EQ(config_json(config).dump(),
            R"({"pipeline":2,"tensor":{"depth":2,"mode":"2.5d","size":8},"world_size":16})");
  config.tensor_mode = TensorMode::none;
  config.legacy_sequence_dp = true;
  EXPECT_EQ(config_json(config).dump(),
            R"({"legacy_sequence_dp":true,"pipeline":2,"tensor":{"mode":null,"size":8},"world_size":16})");
}

TEST(ConfigJson, MeshGroupsAreAsWrittenForTheConfigAndAsBuiltForTheLayout) {
  ParallelConfig config;
  config.mesh = MeshConfig{{{"tp", 2}, {"dp", 4}}, {}};
  EXPECT_EQ(config_json(config).dump(),
            R"({"groups":[],"mesh":{"order":"tp-dp","sizes":{"dp":4,"tp":2}},"world_size":0})");
  EXPECT_EQ(config_json(Layout(config)).dump(),
            R"({"groups":["tp","dp"],"mesh":{"order":"tp-dp","sizes":{"dp":4,"tp":2}},"world_size":8})");
}

}  // namespace
}  // namespace pgroups
