// Node placement and the per-mode locality counts, checked against the groups
// themselves for every rank of many configurations.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/locality.hpp"
#include "support/configs.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using test::preset_config;

// The count by definition: a group is within a node iff all its ranks share one.
std::pair<std::int64_t, std::int64_t> brute_force(const Layout& layout, ParallelMode mode, const NodeMap& nodes) {
  std::int64_t within = 0;
  std::int64_t across = 0;
  for (const auto& group : layout.groups(mode)) {
    std::set<std::int64_t> seen;
    for (std::int64_t rank : group) seen.insert(nodes.node_of(rank));
    ++(seen.size() == 1 ? within : across);
  }
  return {within, across};
}

const KindLocality& find(const std::vector<KindLocality>& modes, std::string_view name) {
  for (const KindLocality& m : modes) {
    if (m.name == name) return m;
  }
  throw std::runtime_error("no mode " + std::string(name));
}

TEST(NodeMapBlocks, ConsecutiveRanksShareANode) {
  const NodeMap nodes = NodeMap::blocks(32, 8);
  EXPECT_EQ(nodes.node_count(), 4);
  EXPECT_EQ(nodes.gpus_per_node(), 8);
  EXPECT_TRUE(nodes.contiguous());
  EXPECT_EQ(nodes.node_of(0), 0);
  EXPECT_EQ(nodes.node_of(7), 0);
  EXPECT_EQ(nodes.node_of(8), 1);
  EXPECT_EQ(nodes.node_of(31), 3);
  EXPECT_EQ(nodes.local_index(13), 5);
  EXPECT_EQ(nodes.ranks_per_node(), (std::vector<std::int64_t>{8, 8, 8, 8}));
}

TEST(NodeMapBlocks, WorldThatDoesNotFillWholeNodesIsAConfigError) {
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)NodeMap::blocks(30, 8); }),
            "world size 30 is not divisible by gpus per node 8: nodes are consecutive blocks of 8 ranks, so the "
            "world must fill whole nodes");
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)NodeMap::blocks(32, 0); }),
            "gpus per node 0 is invalid: it must be a positive integer");
}

TEST(NodeMapBlocks, RankOutsideTheWorldIsAConfigError) {
  const NodeMap nodes = NodeMap::blocks(16, 4);
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)nodes.node_of(16); }),
            "rank 16 is outside the world of 16 ranks (valid: 0..15)");
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)nodes.local_index(-1); }),
            "rank -1 is outside the world of 16 ranks (valid: 0..15)");
}

TEST(NodeMapObserved, RenumbersNodesByFirstAppearanceAndCountsLocalIndices) {
  const NodeMap nodes = NodeMap::observed({70, 70, 12, 12, 12, 5});
  EXPECT_EQ(nodes.node_count(), 3);
  EXPECT_FALSE(nodes.gpus_per_node());
  EXPECT_TRUE(nodes.contiguous());
  EXPECT_EQ(nodes.node_of(0), 0);
  EXPECT_EQ(nodes.node_of(2), 1);
  EXPECT_EQ(nodes.node_of(5), 2);
  EXPECT_EQ(nodes.local_index(4), 2);
  EXPECT_EQ(nodes.ranks_per_node(), (std::vector<std::int64_t>{2, 3, 1}));
}

TEST(NodeMapObserved, RoundRobinPlacementIsNotContiguous) {
  const NodeMap nodes = NodeMap::observed({0, 1, 0, 1});
  EXPECT_FALSE(nodes.contiguous());
  EXPECT_EQ(nodes.local_index(2), 1);
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)NodeMap::observed({}); }), "a node map needs at least one rank");
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)NodeMap::observed({0, -1}); }),
            "rank 1 has node id -1: node ids must not be negative");
}

struct Case {
  ParallelConfig config;
  std::int64_t gpus_per_node;
};

TEST(KindLocality, CountsEqualTheGroupsOfEveryModeForBlocksAndRoundRobin) {
  const std::vector<Case> cases = {
      {preset_config(32, 2, 8, TensorMode::tensor_2p5d, 2), 8},
      {preset_config(32, 2, 8, TensorMode::tensor_2p5d, 2), 4},
      {preset_config(64, 2, 16, TensorMode::tensor_2d), 8},
      {preset_config(64, 1, 8, TensorMode::tensor_3d), 4},
      {preset_config(24, 2, 3, TensorMode::tensor_1d), 4},
      {preset_config(48, 2, 4, TensorMode::sequence), 6},
      {preset_config(16, 4, 1, TensorMode::none), 16},
      {preset_config(36, 1, 9, TensorMode::tensor_2d), 12},
      {preset_config(64, 2, 8, TensorMode::tensor_3d), 16},
      {preset_config(12, 1, 3, TensorMode::tensor_1d), 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(describe(c.config) + " G=" + std::to_string(c.gpus_per_node));
    const Layout layout(c.config);
    const NodeMap blocks = NodeMap::blocks(c.config.world_size, c.gpus_per_node);
    std::vector<std::int64_t> round_robin;
    for (std::int64_t r = 0; r < c.config.world_size; ++r)
      round_robin.push_back(r % (c.config.world_size / c.gpus_per_node));
    const NodeMap observed = NodeMap::observed(round_robin);
    for (const NodeMap* nodes : {&blocks, &observed}) {
      const std::vector<KindLocality> counted = kind_locality(layout, *nodes);
      ASSERT_EQ(counted.size(), layout.modes().size());
      for (std::size_t i = 0; i < counted.size(); ++i) {
        const ParallelMode mode = layout.modes()[i];
        EXPECT_EQ(counted[i].name, mode_name(mode));
        const auto [within, across] = brute_force(layout, mode, *nodes);
        EXPECT_EQ(counted[i].groups_within_node, within) << counted[i].name;
        EXPECT_EQ(counted[i].groups_across_nodes, across) << counted[i].name;
        EXPECT_EQ(counted[i].group_size, layout.group_size(mode));
      }
    }
  }
}

TEST(KindLocality, TheIssueExampleCountsAndWarnsAboutTensorGroups) {
  const Layout layout(preset_config(1024, 4, 16, TensorMode::tensor_2d));
  const NodeMap nodes = NodeMap::blocks(1024, 8);
  EXPECT_EQ(nodes.node_count(), 128);
  const auto modes = kind_locality(layout, nodes);
  EXPECT_EQ(find(modes, "tensor").groups_across_nodes, 64);
  EXPECT_EQ(find(modes, "tensor").groups_within_node, 0);
  EXPECT_EQ(find(modes, "2d_row").groups_within_node, 256);
  EXPECT_EQ(find(modes, "2d_col").groups_across_nodes, 256);
  EXPECT_EQ(find(modes, "data").groups_across_nodes, 64);
  const auto warnings = locality_warnings(layout, nodes, modes);
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_EQ(warnings[0],
            "tensor groups cross nodes: 64 of 64 groups of 16 ranks span more than one node of 8 GPUs, so "
            "tensor-parallel traffic leaves the node (NVLink) for the network; fix: a tensor size that divides 8 "
            "(--tensor 4 is valid here), or nodes of a multiple of 16 GPUs (--gpus-per-node 16)");
  EXPECT_EQ(warnings[1].rfind("2d_col groups cross nodes: 256 of 256 groups of 4 ranks", 0), 0U) << warnings[1];
}

TEST(KindLocality, NoWarningWhenTheTensorSizeDividesTheNode) {
  const Layout layout(preset_config(32, 2, 8, TensorMode::tensor_2p5d, 2));
  const NodeMap nodes = NodeMap::blocks(32, 8);
  const auto modes = kind_locality(layout, nodes);
  EXPECT_TRUE(locality_warnings(layout, nodes, modes).empty());
  // Data and pipeline groups cross nodes by design; they are not flagged.
  EXPECT_GT(find(modes, "data").groups_across_nodes, 0);
}

TEST(KindLocality, FixOffersOnlyTensorSizesValidForTheMode) {
  // 3d needs a cube: no cube above 1 divides 4, so no tensor size is offered.
  const Layout layout(preset_config(64, 1, 8, TensorMode::tensor_3d));
  const NodeMap nodes = NodeMap::blocks(64, 4);
  const auto warnings = locality_warnings(layout, nodes, kind_locality(layout, nodes));
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("fix: a tensor size that divides 4, or nodes of a multiple of 8 GPUs (--gpus-per-node 8)"),
            std::string::npos)
      << warnings[0];
}

TEST(KindLocality, ObservedPlacementWarnsWithAPlacementFix) {
  const Layout layout(preset_config(8, 1, 4, TensorMode::tensor_1d));
  const NodeMap nodes = NodeMap::observed({0, 1, 0, 1, 0, 1, 0, 1});
  const auto warnings = locality_warnings(layout, nodes, kind_locality(layout, nodes));
  ASSERT_EQ(warnings.size(), 2U);  // tensor and 1d
  EXPECT_NE(warnings[0].find("span more than one node, so"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("--map-by slot"), std::string::npos) << warnings[0];
}

TEST(KindLocality, MapOfAnotherWorldSizeIsAConfigError) {
  const Layout layout(preset_config(16, 1, 4, TensorMode::tensor_1d));
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)kind_locality(layout, NodeMap::blocks(32, 8)); }),
            "the node map covers 32 ranks, but the layout has 16");
}

// The closed form holds only for groups of consecutive ranks;
// it checks that, and agrees with the count by definition wherever it answers.
TEST(BlockLocality, AgreesWithTheCountWhereItAnswersAndRefusesOtherShapes) {
  int answered = 0;
  int refused = 0;
  for (const auto& [p, t, mode, depth] :
       std::vector<std::tuple<std::int64_t, std::int64_t, TensorMode, std::optional<std::int64_t>>>{
           {1, 3, TensorMode::tensor_1d, std::nullopt},
           {2, 4, TensorMode::tensor_2d, std::nullopt},
           {1, 8, TensorMode::tensor_2p5d, 2},
           {2, 8, TensorMode::tensor_3d, std::nullopt},
           {3, 2, TensorMode::tensor_1d, std::nullopt}}) {
    for (std::int64_t w = p * t; w <= 96; w += p * t) {
      for (std::int64_t g = 1; g <= w; ++g) {
        if (w % g != 0) continue;
        const Layout layout(preset_config(w, p, t, mode, depth));
        const NodeMap nodes = NodeMap::blocks(w, g);
        const auto counted = kind_locality(layout, nodes);
        for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
          const auto closed = block_locality(layout, kind, g);
          const KindLocality& truth = counted[kind];
          if (!closed) {
            ++refused;
            // Refused only where the groups are not consecutive blocks.
            const auto first = layout.group_of(0, kind);
            EXPECT_NE(first.back() - first.front() + 1, static_cast<std::int64_t>(first.size())) << truth.name;
            continue;
          }
          ++answered;
          EXPECT_EQ(closed->groups_within_node, truth.groups_within_node) << truth.name << " W=" << w << " G=" << g;
          EXPECT_EQ(closed->groups_across_nodes, truth.groups_across_nodes) << truth.name << " W=" << w << " G=" << g;
        }
      }
    }
  }
  EXPECT_GT(answered, 100);
  EXPECT_GT(refused, 10);
}

TEST(BlockLocality, AnswersAtTwoToTheSixtyTwoInOneStep) {
  constexpr std::int64_t kHuge = std::int64_t{1} << 62;
  // Blocks of 3 against nodes of 2^60: two groups straddle the one node boundary.
  const Layout odd(preset_config(3 * (std::int64_t{1} << 60), 1, 3, TensorMode::tensor_1d));
  std::int64_t steps = 0;
  const auto tensor = block_locality(odd, odd.kind_of(ParallelMode::tensor), std::int64_t{1} << 60, &steps);
  ASSERT_TRUE(tensor);
  EXPECT_EQ(tensor->groups_across_nodes, 2);
  EXPECT_EQ(tensor->groups_within_node, (std::int64_t{1} << 60) - 2);
  EXPECT_EQ(steps, 1);
  for (const std::int64_t g : {std::int64_t{1}, std::int64_t{8}, kHuge / 2, kHuge}) {
    const Layout layout(preset_config(kHuge, 4, 16, TensorMode::tensor_2d));
    steps = 0;
    const auto entry = block_locality(layout, layout.kind_of(ParallelMode::tensor), g, &steps);
    ASSERT_TRUE(entry);
    EXPECT_EQ(entry->groups_within_node, g >= 16 ? kHuge / 16 : 0) << g;
    EXPECT_EQ(steps, 1);
    // 2d_col groups are no consecutive ranks: the closed form cannot judge them.
    EXPECT_FALSE(block_locality(layout, layout.kind_of(ParallelMode::tensor_2d_col), g));
  }
}

TEST(LocalityWarnings, TheFixIsFoundInBoundedStepsAtAnySize) {
  constexpr std::int64_t kHuge = std::int64_t{1} << 62;
  for (const std::int64_t g : {std::int64_t{2}, std::int64_t{1} << 31, kHuge / 4}) {
    const Layout layout(preset_config(kHuge, 2, kHuge / 2, TensorMode::tensor_1d));
    const NodeMap nodes = NodeMap::blocks(kHuge, g);
    std::vector<KindLocality> modes = {*block_locality(layout, layout.kind_of(ParallelMode::tensor), g)};
    std::int64_t steps = 0;
    const auto warnings = locality_warnings(layout, nodes, modes, &steps);
    ASSERT_EQ(warnings.size(), 1U);
    // The largest valid 1d tensor size below T that divides G is G itself (G < T).
    EXPECT_NE(warnings[0].find(fmt::format("(--tensor {} is valid here)", g)), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find(fmt::format("--gpus-per-node {})", kHuge / 2)), std::string::npos) << warnings[0];
    EXPECT_LE(steps, 200) << g;
  }
}

TEST(LocalityWarnings, AMeshGroupsFixNamesItsOwnDimensions) {
  ParallelConfig c;
  c.mesh = MeshConfig{parse_mesh_dims("dp=2,tp=4,x=2"), {"x-tp"}};
  const Layout layout(c);
  const NodeMap nodes = NodeMap::blocks(16, 4);
  const auto warnings = locality_warnings(layout, nodes, kind_locality(layout, nodes));
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("fix: list tp, x first in --mesh (the fastest dimensions), with sizes whose product (8) "
                             "divides the 4 ranks per node"),
            std::string::npos)
      << warnings[0];
  EXPECT_EQ(warnings[0].rfind("x-tp groups cross nodes: 2 of 2 groups of 8 ranks", 0), 0U) << warnings[0];
}

TEST(BandwidthHungry, TensorFamilySequenceAndMeshTokensWithTp) {
  for (const char* name :
       {"tensor", "1d", "sequence", "2d_row", "2d_col", "2p5d_col", "2p5d_row", "2p5d_dep", "2p5d_xz", "3d_input",
        "3d_weight", "3d_output", "3d_input_x_weight", "3d_output_x_weight", "tp", "tp-dp", "cp-tp", "dp-tp-ep"}) {
    EXPECT_TRUE(is_bandwidth_hungry(name)) << name;
  }
  for (const char* name :
       {"global", "data", "model", "pipe", "sequence_dp", "dp", "pp", "cp", "tpx", "dp-tpx", "embd", ""}) {
    EXPECT_FALSE(is_bandwidth_hungry(name)) << name;
  }
}

}  // namespace
}  // namespace pgroups
