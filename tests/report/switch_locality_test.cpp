// The switch tree at run time (pgroups/report/switch_locality.hpp): every kind's groups
// within and across the switches of each level, from Slurm's SLURM_TOPOLOGY_ADDR.

#include "pgroups/report/switch_locality.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pgroups::report {
namespace {

Layout mesh_of_eight() {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims("tp=2,dp=2,pp=2"), {"tp", "dp", "pp"}};
  config.world_size = 8;
  return Layout(config);
}

// Ranks 0-3 on node0 under leaf0, 4-7 on node1 under leaf1, both leaves under the spine.
std::vector<std::string> two_leaves() {
  std::vector<std::string> addresses;
  for (int r = 0; r < 8; ++r) addresses.push_back(r < 4 ? "spine.leaf0.node0" : "spine.leaf1.node1");
  return addresses;
}

TEST(SwitchLocality, CountsEachKindWithinAndAcrossTheSwitchesOfEachLevel) {
  const std::vector<SwitchLevelLocality> levels = switch_locality(mesh_of_eight(), two_leaves(), "switch.switch.node");
  ASSERT_EQ(levels.size(), 2U);
  EXPECT_EQ(levels[0].depth, 0U);
  EXPECT_EQ(levels[0].switches, 1);
  for (const KindLocality& kind : levels[0].kinds) EXPECT_EQ(kind.groups_across_nodes, 0) << kind.name;
  EXPECT_EQ(levels[1].switches, 2);
  EXPECT_EQ(levels[1].kinds[0].name, "tp");
  EXPECT_EQ(levels[1].kinds[0].groups_across_nodes, 0);
  EXPECT_EQ(levels[1].kinds[2].name, "pp");
  EXPECT_EQ(levels[1].kinds[2].groups_across_nodes, 4);
  EXPECT_TRUE(switch_locality_warnings(levels).empty());  // pp is not tensor traffic
  EXPECT_EQ(switch_locality_json(levels)[1]["kinds"][2]["across"], 4);
}

TEST(SwitchLocality, TensorGroupsAcrossALeafAreWarnedAbout) {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims("dp=4,tp=2"), {"tp", "dp"}};
  config.world_size = 8;
  const std::vector<SwitchLevelLocality> levels = switch_locality(Layout(config), two_leaves(), "switch.switch.node");
  const std::vector<std::string> warnings = switch_locality_warnings(levels);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("tp groups cross switches of level 1: 4 of 4 groups"), std::string::npos) << warnings[0];
}

TEST(SwitchLocality, NoLevelsWithoutAnAddressOnEveryRankOrWithAnotherShape) {
  std::vector<std::string> addresses = two_leaves();
  addresses[3].clear();
  EXPECT_TRUE(switch_locality(mesh_of_eight(), addresses, "switch.switch.node").empty());
  EXPECT_TRUE(switch_locality(mesh_of_eight(), two_leaves(), "switch.rack").empty());
  EXPECT_TRUE(switch_locality(mesh_of_eight(), std::vector<std::string>(8, "node0"), "node").empty());
  EXPECT_EQ(switch_locality_text({}), "");
}

// An unbalanced tree: node0 (ranks 0-3) hangs from the spine itself, node1 (ranks 4-7)
// from a leaf under it, so rank 0's pattern ("switch.node") is shorter than rank 4's.
// The report keeps both levels; at the deeper one node0's ranks count under the spine.
TEST(SwitchLocality, AnUnbalancedTreeIsCountedDownToItsDeepestLevel) {
  std::vector<std::string> addresses;
  for (int r = 0; r < 8; ++r) addresses.push_back(r < 4 ? "spine.node0" : "spine.leaf1.node1");
  for (const std::string pattern : {"switch.node", "switch.switch.node"}) {
    const std::vector<SwitchLevelLocality> levels = switch_locality(mesh_of_eight(), addresses, pattern);
    ASSERT_EQ(levels.size(), 2U) << pattern;
    EXPECT_EQ(levels[0].switches, 1);
    EXPECT_EQ(levels[0].ranks_above, 0);
    EXPECT_EQ(levels[1].switches, 2);
    EXPECT_EQ(levels[1].ranks_above, 4);
    EXPECT_EQ(levels[1].kinds[2].name, "pp");  // pp pairs rank r with r + 4: across
    EXPECT_EQ(levels[1].kinds[2].groups_across_nodes, 4);
    EXPECT_EQ(levels[1].kinds[0].groups_across_nodes, 0);
  }
  const std::string text = switch_locality_text(switch_locality(mesh_of_eight(), addresses, "switch.node"));
  EXPECT_NE(text.find("level 1: 2 switches (4 ranks hang from a switch above this level, each counted under it: the "
                      "tree is unbalanced)"),
            std::string::npos)
      << text;
  EXPECT_EQ(switch_locality_json(switch_locality(mesh_of_eight(), addresses, "switch.node"))[1]["ranks_above"], 4);
}

}  // namespace
}  // namespace pgroups::report
