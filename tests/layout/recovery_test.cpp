// Recovery (pgroups/layout/recovery.hpp): the survivors' layout over presets and meshes, every
// new group mapped back onto the surviving replicas' old groups, spares, joiners, the errors,
// and a world of 2^40 ranks answered at once.

#include "pgroups/layout/recovery.hpp"

#include <gtest/gtest.h>

#include "support/configs.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/mesh_config.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using test::message_of;

Layout mesh_layout(const std::string& dims, std::vector<std::string> groups = {}) {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims(dims), std::move(groups)};
  return Layout(config);
}

Layout preset_layout(std::int64_t world, std::int64_t pipeline, std::int64_t tensor,
                     TensorMode mode = TensorMode::tensor_1d, std::optional<std::int64_t> depth = std::nullopt,
                     bool legacy = false) {
  ParallelConfig config = pgroups::test::preset_config(world, pipeline, tensor, mode, depth);
  config.legacy_sequence_dp = legacy;
  return Layout(config);
}

Recovery lose(const Layout& layout, std::vector<std::int64_t> lost, std::string shrink = {}) {
  return Recovery(layout, RecoveryRequest{std::move(lost), {}, std::move(shrink)});
}

bool varies(const GroupKind& kind, const std::string& dim) {
  return std::find(kind.dims.begin(), kind.dims.end(), dim) != kind.dims.end();
}

// Every group of every new kind, mapped through the rank map, is the old group of its first
// member with only the active ranks kept; a kind that does not vary the shrinking dimension
// keeps its old group whole. The rank map is a bijection onto the active ranks, and every
// old rank is active, spare or lost, as the counts say.
void expect_replicas_keep_their_groups(const Recovery& recovery) {
  const Layout& before = recovery.old_layout();
  const Layout& after = recovery.layout();
  const std::vector<std::int64_t> map = recovery.rank_map();
  ASSERT_EQ(static_cast<std::int64_t>(map.size()), after.world_size());
  for (std::int64_t r = 0; r < after.world_size(); ++r) {
    ASSERT_EQ(recovery.new_rank(map[r]), r) << "new rank " << r;
    if (before.rank_map().identity() && r > 0 && map[r - 1] < before.world_size() && map[r] < before.world_size()) {
      EXPECT_LT(map[r - 1], map[r]) << "the rank map is monotone";
    }
  }
  std::int64_t active = 0, spare = 0, lost = 0;
  for (std::int64_t old = 0; old < before.world_size(); ++old) {
    switch (recovery.fate(old)) {
      case RankFate::active: ++active; break;
      case RankFate::spare: ++spare; break;
      case RankFate::lost: ++lost; break;
    }
  }
  for (std::int64_t id : recovery.joining()) recovery.fate(id) == RankFate::active ? ++active : ++spare;
  EXPECT_EQ(active, after.world_size());
  EXPECT_EQ(spare, recovery.spare_count());
  EXPECT_EQ(lost, static_cast<std::int64_t>(recovery.lost().size()));
  EXPECT_EQ(static_cast<std::int64_t>(recovery.spares().size()), recovery.spare_count());
  for (const GroupKind& kind : after.group_kinds()) {
    const std::size_t new_kind = after.group_kind_index(kind.name);
    const std::size_t old_kind = before.group_kind_index(kind.name);
    const bool whole =
        !varies(kind, recovery.shrink_dim()) && !(kind.name == "sequence_dp" && before.config().legacy_sequence_dp);
    for (const std::vector<std::int64_t>& group : after.groups(new_kind)) {
      std::vector<std::int64_t> mapped;
      for (std::int64_t r : group) mapped.push_back(map[r]);
      if (mapped.front() >= before.world_size()) continue;  // a joiners' replica: no old group
      // A placed old layout lists a group's launcher ranks ascending, which need not be the
      // mesh order the new ranks follow: the same members is what is kept.
      if (!before.rank_map().identity()) std::sort(mapped.begin(), mapped.end());
      std::vector<std::int64_t> expected;
      for (std::int64_t old : before.group_of(mapped.front(), old_kind)) {
        if (recovery.fate(old) == RankFate::active) expected.push_back(old);
      }
      std::vector<std::int64_t> old_only;
      std::copy_if(mapped.begin(), mapped.end(), std::back_inserter(old_only),
                   [&](std::int64_t id) { return id < before.world_size(); });
      EXPECT_EQ(old_only, expected) << "kind " << kind.name;
      if (whole) {
        EXPECT_EQ(mapped, before.group_of(mapped.front(), old_kind)) << "kind " << kind.name << " kept whole";
      }
    }
  }
}

TEST(Recovery, LossInOneReplicaDropsItAndMakesItsHealthyRanksSpares) {
  const Layout layout = mesh_layout("tp=2,dp=4,pp=2", {"tp", "dp", "pp", "tp-dp"});
  const Recovery recovery = lose(layout, {3});  // tp 1, dp 1, pp 0
  EXPECT_EQ(recovery.shrink_dim(), "dp");
  EXPECT_EQ(recovery.layout().world_size(), 12);
  EXPECT_EQ(recovery.layout().data_parallel_size(), 3);
  EXPECT_EQ(recovery.layout().config().mesh->dims[1], (MeshDim{"dp", 3}));
  EXPECT_EQ(std::vector<std::int64_t>(recovery.dropped_replicas().begin(), recovery.dropped_replicas().end()),
            std::vector<std::int64_t>{1});
  EXPECT_EQ(recovery.spares(), (std::vector<std::int64_t>{2, 10, 11}));
  EXPECT_EQ(recovery.rank_map(), (std::vector<std::int64_t>{0, 1, 4, 5, 6, 7, 8, 9, 12, 13, 14, 15}));
  EXPECT_EQ(recovery.fate(3), RankFate::lost);
  EXPECT_EQ(recovery.fate(10), RankFate::spare);
  EXPECT_EQ(recovery.new_rank(12), 8);
  expect_replicas_keep_their_groups(recovery);
}

TEST(Recovery, LossesInOneReplicaDropOnlyIt) {
  const Recovery recovery = lose(mesh_layout("tp=2,dp=4,pp=2"), {10, 3, 2});
  EXPECT_EQ(recovery.layout().world_size(), 12);
  EXPECT_EQ(recovery.spares(), (std::vector<std::int64_t>{11}));
  EXPECT_EQ(std::vector<std::int64_t>(recovery.lost().begin(), recovery.lost().end()),
            (std::vector<std::int64_t>{2, 3, 10}));
  expect_replicas_keep_their_groups(recovery);
}

TEST(Recovery, LossesInSeveralReplicasDropEach) {
  const Recovery recovery = lose(mesh_layout("tp=2,dp=4,pp=2", {"tp", "dp", "pp", "tp-dp", "dp-pp"}), {3, 12});
  EXPECT_EQ(recovery.layout().config().mesh->dims[1].size, 2);
  EXPECT_EQ(recovery.rank_map(), (std::vector<std::int64_t>{0, 1, 6, 7, 8, 9, 14, 15}));
  EXPECT_EQ(recovery.spares(), (std::vector<std::int64_t>{2, 4, 5, 10, 11, 13}));
  expect_replicas_keep_their_groups(recovery);
}

TEST(Recovery, LossInEveryReplicaNamesTheReplicasAndWhy) {
  const Layout layout = mesh_layout("tp=2,dp=2,pp=2");
  const std::string message = message_of<ConfigError>([&] { (void)lose(layout, {0, 3, 7}); });
  EXPECT_NE(message.find("no layout remains: every replica of dp lost a rank"), std::string::npos) << message;
  EXPECT_NE(message.find("dp=0: lost rank 0"), std::string::npos) << message;
  EXPECT_NE(message.find("dp=1: lost ranks 3, 7"), std::string::npos) << message;
}

TEST(Recovery, WholeNodeOfAPresetIsOneReplica) {
  // data 2 x pipeline 2 x tensor 4: a node of 8 GPUs is one data replica.
  const Layout layout = preset_layout(16, 2, 4, TensorMode::tensor_2d);
  const Recovery recovery = lose(layout, {8, 9, 10, 11, 12, 13, 14, 15});
  EXPECT_EQ(recovery.layout().config().world_size, 8);
  EXPECT_EQ(recovery.layout().data_parallel_size(), 1);
  EXPECT_EQ(recovery.spare_count(), 0);
  EXPECT_EQ(recovery.rank_map(), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  expect_replicas_keep_their_groups(recovery);
}

TEST(Recovery, WholeNodeOfAMeshAcrossReplicas) {
  // tp=4,dp=2,pp=2 on nodes of 8: node 1 (ranks 8-15) is pp stage 1 of both replicas.
  const Layout layout = mesh_layout("tp=4,dp=2,pp=2");
  const std::string message = message_of<ConfigError>([&] { (void)lose(layout, {8, 9, 10, 11, 12, 13, 14, 15}); });
  EXPECT_NE(
      message.find("every replica of dp lost a rank (dp=0: lost ranks 8, 9, 10, 11; dp=1: lost ranks 12, 13, 14, 15)"),
      std::string::npos)
      << message;
  // Shrinking pp instead keeps both data replicas on the surviving node.
  const Recovery recovery = lose(layout, {8, 9, 10, 11, 12, 13, 14, 15}, "pp");
  EXPECT_EQ(recovery.layout().world_size(), 8);
  EXPECT_EQ(recovery.layout().pipeline_size(), 1);
  expect_replicas_keep_their_groups(recovery);
}

TEST(Recovery, EveryPresetModeKeepsItsGroups) {
  const std::vector<Layout> layouts = {
      preset_layout(16, 2, 2, TensorMode::tensor_1d),      preset_layout(32, 2, 4, TensorMode::tensor_2d),
      preset_layout(32, 1, 8, TensorMode::tensor_2p5d, 2), preset_layout(24, 1, 8, TensorMode::tensor_3d),
      preset_layout(16, 2, 2, TensorMode::sequence),       preset_layout(12, 3, 1, TensorMode::none)};
  for (const Layout& layout : layouts) {
    SCOPED_TRACE(describe(layout.config()));
    const std::int64_t w = layout.world_size();
    const Recovery recovery = lose(layout, {1, w - 1});
    EXPECT_EQ(recovery.layout().config().pipeline, layout.config().pipeline);
    EXPECT_EQ(recovery.layout().config().tensor_size, layout.config().tensor_size);
    expect_replicas_keep_their_groups(recovery);
  }
}

TEST(Recovery, LegacySequenceDataParallelRecoversOnlyInAWorldOfItsSize) {
  // Its groups are blocks of W / pipeline ranks: [0..7] and [8..15] here, each a data
  // replica. Losing rank 5 would leave 8 ranks whose blocks of 4 split the surviving [8..15].
  const Layout layout = preset_layout(16, 2, 4, TensorMode::sequence, std::nullopt, true);
  EXPECT_EQ(message_of<ConfigError>([&] { (void)lose(layout, {5}); }),
            "a layout with legacy_sequence_dp cannot shrink or grow from 16 to 8 ranks: its sequence_dp groups are "
            "blocks of world size / pipeline consecutive ranks, which in the new world would not be the survivors' "
            "old groups (plan the job without legacy_sequence_dp, or replace the lost replicas with as many joining "
            "ranks)");
  // Joiners that replace the dropped replica keep the world, and every group.
  std::vector<std::int64_t> joiners;
  for (std::int64_t id = 16; id < 24; ++id) joiners.push_back(id);
  const Recovery replaced(layout, RecoveryRequest{{5}, joiners, {}});
  EXPECT_EQ(replaced.layout().world_size(), 16);
  expect_replicas_keep_their_groups(replaced);
}

TEST(Recovery, PresetShrinksItsPipelineOrTensorWhenAsked) {
  const Recovery pipe = lose(preset_layout(24, 3, 2, TensorMode::tensor_1d), {3}, "pp");
  EXPECT_EQ(pipe.shrink_dim(), "pipe");
  EXPECT_EQ(pipe.layout().config().pipeline, 2);
  EXPECT_EQ(pipe.layout().config().world_size, 16);
  expect_replicas_keep_their_groups(pipe);
  const Recovery tensor = lose(preset_layout(16, 2, 4, TensorMode::tensor_1d), {5}, "tp");
  EXPECT_EQ(tensor.layout().config().tensor_size, 3);
  expect_replicas_keep_their_groups(tensor);
}

TEST(Recovery, MeshWithEmbeddingGroupsKeepsThem) {
  const Recovery recovery =
      lose(mesh_layout("tp=2,cp=2,dp=3,pp=2", {"tp", "cp", "dp", "pp", "embd", "pos_embd", "tp-cp-dp"}), {5});
  expect_replicas_keep_their_groups(recovery);
}

TEST(Recovery, JoinersFillWholeNewReplicasAndTheRestAreSpares) {
  const Layout layout = mesh_layout("tp=2,dp=4,pp=2", {"tp", "dp", "pp", "tp-dp"});
  const Recovery recovery(layout, RecoveryRequest{{3}, {21, 16, 17, 18, 19, 20}, {}});
  EXPECT_EQ(recovery.added_replicas(), 1);
  EXPECT_EQ(recovery.layout().config().mesh->dims[1].size, 4);
  EXPECT_EQ(recovery.spares(), (std::vector<std::int64_t>{2, 10, 11, 20, 21}));
  // The new replica is dp=3: its tp pairs at pp 0 and pp 1 are the joiners in order.
  const std::vector<std::int64_t> map = recovery.rank_map();
  EXPECT_EQ(map[6], 16);
  EXPECT_EQ(map[7], 17);
  EXPECT_EQ(map[14], 18);
  EXPECT_EQ(map[15], 19);
  EXPECT_EQ(recovery.fate(20), RankFate::spare);
  expect_replicas_keep_their_groups(recovery);
}

TEST(Recovery, JoinersAloneGrowThePreset) {
  const Recovery recovery(preset_layout(8, 2, 2), RecoveryRequest{{}, {8, 9, 10, 11}, {}});
  EXPECT_EQ(recovery.layout().config().world_size, 12);
  EXPECT_EQ(recovery.layout().data_parallel_size(), 3);
  EXPECT_EQ(recovery.old_rank(11), 11);
  expect_replicas_keep_their_groups(recovery);
}

TEST(Recovery, JoinersCanReplaceEveryDroppedReplica) {
  const Recovery recovery(mesh_layout("tp=2,dp=1"), RecoveryRequest{{1}, {2, 3}, {}});
  EXPECT_EQ(recovery.rank_map(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(recovery.spares(), (std::vector<std::int64_t>{0}));
}

TEST(Recovery, AliveListGivesLostAndJoining) {
  const std::vector<std::int64_t> alive = {9, 0, 1, 2, 4, 5, 6, 7, 8};
  const RecoveryRequest request = recovery_request_from_alive(8, alive);
  EXPECT_EQ(request.lost, std::vector<std::int64_t>{3});
  EXPECT_EQ(request.joining, (std::vector<std::int64_t>{8, 9}));
  EXPECT_NE(message_of<ConfigError>([] {
              const std::vector<std::int64_t> twice = {1, 1};
              (void)recovery_request_from_alive(8, twice);
            }).find("rank 1 is listed twice as alive"),
            std::string::npos);
}

TEST(Recovery, NoLossKeepsTheLayout) {
  const Layout layout = mesh_layout("tp=2,dp=2");
  const Recovery recovery = lose(layout, {});
  EXPECT_EQ(recovery.layout().config(), layout.config());
  EXPECT_EQ(recovery.rank_map(), (std::vector<std::int64_t>{0, 1, 2, 3}));
}

TEST(Recovery, BadInputNamesTheValueAndTheRule) {
  const Layout layout = mesh_layout("tp=2,dp=4");
  EXPECT_EQ(message_of<ConfigError>([&] { (void)lose(layout, {8}); }),
            "lost rank 8 is outside the world of 8 ranks: a lost rank is in [0, 8)");
  EXPECT_EQ(message_of<ConfigError>([&] { (void)lose(layout, {-1}); }),
            "lost rank -1 is outside the world of 8 ranks: a lost rank is in [0, 8)");
  EXPECT_EQ(message_of<ConfigError>([&] { (void)lose(layout, {2, 2}); }),
            "rank 2 is listed twice as lost: each rank may be named once");
  EXPECT_EQ(message_of<ConfigError>([&] { (void)Recovery(layout, RecoveryRequest{{}, {7}, {}}); }),
            "joining rank 7 is not a new process: the old world has ranks [0, 8), joining ranks are numbered from 8");
  EXPECT_EQ(message_of<ConfigError>([&] { (void)lose(layout, {1}, "pd"); }),
            "shrinking dimension 'pd' is not a dimension of the mesh: its dimensions are tp, dp (did you mean dp?)");
  EXPECT_EQ(message_of<ConfigError>([&] { (void)lose(mesh_layout("tp=2,pp=2"), {1}); }),
            "shrinking dimension 'dp' is not a dimension of the mesh: its dimensions are tp, pp");
  EXPECT_EQ(message_of<ConfigError>([&] { (void)lose(preset_layout(8, 1, 4, TensorMode::tensor_2d), {1}, "tensor"); }),
            "the tensor of mode 2d cannot shrink: it is a grid of several dimensions, not one (shrink data or pipe)");
  EXPECT_EQ(message_of<ConfigError>([&] { (void)lose(preset_layout(8, 1, 4), {1}, "row"); }),
            "shrinking dimension 'row' is not one of this preset's: data (dp), pipe (pp), tensor (tp)");
  const Recovery recovery = lose(layout, {1});
  EXPECT_EQ(message_of<ConfigError>([&] { (void)recovery.new_rank(8); }),
            "rank 8 is neither a rank of the old world [0, 8) nor a joining rank");
  EXPECT_EQ(message_of<ConfigError>([&] { (void)recovery.old_rank(6); }),
            "new rank 6 is outside the new world of 6 ranks");
}

Layout placed_mesh_layout(const std::string& dims, std::vector<std::int64_t> map,
                          std::vector<std::string> groups = {}) {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims(dims), std::move(groups)};
  config.rank_map = std::move(map);
  return Layout(config);
}

TEST(RecoveryOfAPlacedLayout, LostLauncherRankDropsTheReplicaOfTheMeshRankItRuns) {
  // Launcher rank 3 runs mesh rank 6 (tp 0, dp 3): dp=3 goes, launcher ranks 3 and 7 with it.
  const Layout layout = placed_mesh_layout("tp=2,dp=4", {0, 4, 1, 5, 2, 6, 3, 7});
  const Recovery recovery = lose(layout, {3});
  EXPECT_EQ(recovery.layout().world_size(), 6);
  EXPECT_TRUE(recovery.layout().rank_map().identity()) << "the new ranks are the new mesh ranks";
  EXPECT_EQ(std::vector<std::int64_t>(recovery.dropped_replicas().begin(), recovery.dropped_replicas().end()),
            std::vector<std::int64_t>{3});
  EXPECT_EQ(recovery.rank_map(), (std::vector<std::int64_t>{0, 4, 1, 5, 2, 6}));
  EXPECT_EQ(recovery.spares(), std::vector<std::int64_t>{7});
  EXPECT_EQ(recovery.replica_of(3), 3);
  EXPECT_EQ(recovery.new_rank(4), 1);
  EXPECT_EQ(recovery.fate(7), RankFate::spare);
  EXPECT_EQ(recovery.renumbered_count(), 5) << "launcher ranks 4, 1, 5, 2 and 6 take new ranks 1 to 5";
  const std::size_t tp = recovery.layout().group_kind_index("tp");
  for (const std::vector<std::int64_t>& group : recovery.layout().groups(tp)) {
    const std::vector<std::int64_t> launcher = {recovery.old_rank(group[0]), recovery.old_rank(group[1])};
    EXPECT_EQ(launcher, layout.group_of(launcher[0], layout.group_kind_index("tp"))) << "an old tp group";
  }
  expect_replicas_keep_their_groups(recovery);
}

TEST(RecoveryOfAPlacedLayout, JoinersReplaceTheReplicaOfTheLostRankNotAHealthyOne) {
  // Launcher rank 1 runs mesh rank 2 (tp 0, dp 1): dp=1 (launcher ranks 1 and 3) goes, the
  // healthy replica dp=0 (launcher 0 and 2) stays, and joiners 4 and 5 form the new dp=1.
  const Layout layout = placed_mesh_layout("tp=2,dp=2", {0, 2, 1, 3});
  const std::vector<std::int64_t> alive = {0, 2, 3, 4, 5};
  const Recovery recovery(layout, recovery_request_from_alive(4, alive));
  EXPECT_EQ(recovery.rank_map(), (std::vector<std::int64_t>{0, 2, 4, 5}));
  EXPECT_EQ(recovery.spares(), std::vector<std::int64_t>{3});
  EXPECT_EQ(recovery.fate(1), RankFate::lost);
  expect_replicas_keep_their_groups(recovery);
}

TEST(RecoveryOfAPlacedLayout, EveryReplicaLostNamesTheLauncherRanks) {
  const Layout layout = placed_mesh_layout("tp=2,dp=2", {0, 2, 1, 3});
  EXPECT_EQ(message_of<ConfigError>([&] { (void)lose(layout, {1, 2}); }),
            "no layout remains: every replica of dp lost a rank (dp=0: lost rank 2; dp=1: lost rank 1), and a "
            "replica with a lost rank is dropped; 0 joining ranks fill no whole replica of 2 ranks");
}

TEST(RecoveryOfAPlacedLayout, SecondRecoveryTakesTheFirstOnesNewRanks) {
  // Placed pp fastest: mesh rank tp + 2 dp + 8 pp runs on launcher rank pp + 2 tp + 4 dp.
  const Layout layout = placed_mesh_layout("tp=2,dp=4,pp=2", {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15},
                                           {"tp", "dp", "pp", "tp-dp"});
  const Recovery first = lose(layout, {12});  // launcher 12 runs mesh rank 6: tp 0, dp 3, pp 0
  EXPECT_EQ(std::vector<std::int64_t>(first.dropped_replicas().begin(), first.dropped_replicas().end()),
            std::vector<std::int64_t>{3});
  expect_replicas_keep_their_groups(first);
  const Recovery second = lose(first.layout(), {0});
  // New rank r of the second runs first-recovery rank second.old_rank(r), which runs launcher
  // rank first.old_rank(that): composed, every tp group is still a first-world tp group.
  const std::size_t tp = second.layout().group_kind_index("tp");
  for (const std::vector<std::int64_t>& group : second.layout().groups(tp)) {
    std::vector<std::int64_t> launcher;
    for (std::int64_t r : group) launcher.push_back(first.old_rank(second.old_rank(r)));
    EXPECT_EQ(launcher, layout.group_of(launcher[0], layout.group_kind_index("tp")));
  }
  expect_replicas_keep_their_groups(second);
}

// The what-if against the recovery of each node's loss, computed one node at a time.
void expect_what_if_is_each_nodes_recovery(const Layout& layout, std::int64_t gpus_per_node, std::string shrink = {}) {
  const NodeLossWhatIf what_if = what_if_node_loss(layout, gpus_per_node, shrink);
  std::map<std::int64_t, NodeLossClass> expected;
  for (std::int64_t node = 0; node < layout.world_size() / gpus_per_node; ++node) {
    const RecoveryRequest request = node_loss_request(node, gpus_per_node, shrink);
    std::int64_t dropped = 0;
    std::int64_t new_size = 0;
    std::int64_t spares = 0;
    std::int64_t renumbered = 0;
    try {
      const Recovery recovery(layout, request);
      dropped = static_cast<std::int64_t>(recovery.dropped_replicas().size());
      new_size = recovery.layout().mesh().dims()[recovery.layout().mesh().dim_index(recovery.shrink_dim())].size;
      spares = recovery.spare_count();
      renumbered = recovery.renumbered_count();
    } catch (const ConfigError&) {  // nothing survives: every replica dropped
      dropped = what_if.old_size;
      spares = layout.world_size() - gpus_per_node;
    }
    auto [entry, added] =
        expected.try_emplace(dropped, NodeLossClass{dropped, 0, node, new_size, spares, renumbered, renumbered});
    ++entry->second.nodes;
    entry->second.renumbered_min = std::min(entry->second.renumbered_min, renumbered);
    entry->second.renumbered_max = std::max(entry->second.renumbered_max, renumbered);
  }
  ASSERT_EQ(what_if.classes.size(), expected.size());
  std::size_t i = 0;
  for (const auto& [dropped, c] : expected) {
    const NodeLossClass& got = what_if.classes[i++];
    SCOPED_TRACE(testing::Message() << "class of " << dropped << " dropped");
    EXPECT_EQ(got.dropped, c.dropped);
    EXPECT_EQ(got.nodes, c.nodes);
    EXPECT_EQ(got.first_node, c.first_node);
    EXPECT_EQ(got.new_size, c.new_size);
    EXPECT_EQ(got.spares, c.spares);
    EXPECT_EQ(got.renumbered_min, c.renumbered_min);
    EXPECT_EQ(got.renumbered_max, c.renumbered_max);
  }
}

TEST(WhatIfNodeLoss, EveryClassIsWhatTheRecoveryOfEachOfItsNodesGives) {
  expect_what_if_is_each_nodes_recovery(mesh_layout("tp=2,dp=4,pp=2"), 4);
  expect_what_if_is_each_nodes_recovery(mesh_layout("tp=2,dp=4,pp=2"), 2);
  expect_what_if_is_each_nodes_recovery(mesh_layout("tp=2,dp=4,pp=2"), 8);  // nothing survives
  expect_what_if_is_each_nodes_recovery(mesh_layout("tp=3,dp=4"), 2);      // nodes cut tp groups
  expect_what_if_is_each_nodes_recovery(mesh_layout("tp=2,dp=6,pp=2"), 4);
  expect_what_if_is_each_nodes_recovery(mesh_layout("tp=2,dp=6,pp=2"), 4, "pp");
  expect_what_if_is_each_nodes_recovery(preset_layout(24, 2, 2), 6);
  expect_what_if_is_each_nodes_recovery(placed_mesh_layout("tp=2,dp=4", {0, 4, 1, 5, 2, 6, 3, 7}), 2);
}

TEST(WhatIfNodeLoss, ClassesCountNodesAndTheRenumberedRange) {
  const NodeLossWhatIf what_if = what_if_node_loss(mesh_layout("tp=2,dp=4,pp=2"), 4);
  EXPECT_EQ(what_if.node_count, 4);
  ASSERT_EQ(what_if.classes.size(), 1U);
  const NodeLossClass& c = what_if.classes[0];
  EXPECT_EQ(c.nodes, 4);
  EXPECT_EQ(c.dropped, 2);
  EXPECT_EQ(c.new_size, 2);
  EXPECT_EQ(c.spares, 4);
  EXPECT_EQ(c.renumbered_min, 4);  // a node holding dp 2 and 3: dp 0 and 1 keep their ranks
  EXPECT_EQ(c.renumbered_max, 8);
  EXPECT_EQ(message_of<ConfigError>([] { (void)what_if_node_loss(mesh_layout("tp=2,dp=4"), 3); }),
            "what-if node needs nodes that the world fills: gpus per node 3 does not divide world size 8");
}

TEST(WhatIfNodeLoss, AnswersForFourMillionNodesWithoutEnumeratingRanks) {
  const auto start = std::chrono::steady_clock::now();
  const NodeLossWhatIf what_if = what_if_node_loss(mesh_layout("tp=8,dp=524288,pp=8"), 8);
  EXPECT_EQ(what_if.node_count, std::int64_t{1} << 22);
  ASSERT_EQ(what_if.classes.size(), 1U);
  EXPECT_EQ(what_if.classes[0].new_size, 524287);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Recovery, AnswersAtOnceAtTwoToTheFortyRanks) {
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t w = std::int64_t{1} << 40;
  const Layout preset = preset_layout(w, 8, 8, TensorMode::tensor_1d);
  const Recovery recovery = lose(preset, {5, (w >> 1) + 7, w - 1});
  EXPECT_EQ(recovery.layout().world_size(), w - 3 * 64);
  EXPECT_EQ(recovery.spare_count(), 3 * 64 - 3);
  EXPECT_EQ(recovery.old_rank(0), 64);
  EXPECT_EQ(recovery.old_rank(recovery.layout().world_size() - 1), w - 65);
  EXPECT_EQ(recovery.new_rank(w - 65), recovery.layout().world_size() - 1);
  EXPECT_EQ(recovery.fate((w >> 1) + 8), RankFate::spare);
  const Layout mesh = mesh_layout("tp=8,dp=1073741824,pp=128");
  const Recovery shrunk = lose(mesh, {9, 8 * 1073741824LL * 100 + 3});
  EXPECT_EQ(shrunk.layout().config().mesh->dims[1].size, 1073741824LL - 2);
  for (std::int64_t r : {std::int64_t{0}, std::int64_t{12345678901}, shrunk.layout().world_size() - 1}) {
    EXPECT_EQ(shrunk.new_rank(shrunk.old_rank(r)), r);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// renumbered_count() is the number of survivors whose rank changes, counted one by one here
// over every new rank: with joiners that grow the dimension too, where a replica above a gap
// can keep its rank by the slower stride's growth.
TEST(Recovery, RenumberedCountIsTheSurvivorsWhoseRankChangesWithJoinersToo) {
  struct Case {
    const char* mesh;
    std::vector<std::int64_t> lost;
    std::int64_t joiners;
    const char* shrink;
  };
  const std::vector<Case> cases = {
      {"dp=4,pp=2", {0}, 2, "dp"},          {"dp=4,pp=2", {0}, 4, "dp"},        {"tp=2,dp=4,pp=3", {2}, 4, "dp"},
      {"tp=2,dp=4,pp=3", {0, 13}, 8, "dp"}, {"dp=8,pp=4", {1, 3}, 6, "dp"},     {"tp=2,dp=4,pp=2", {3}, 6, "dp"},
      {"tp=2,dp=4,pp=2", {}, 4, "dp"},      {"dp=6,tp=2", {4}, 0, "dp"},        {"tp=2,pp=3,dp=4", {7}, 2, "pp"},
      {"dp=3,pp=2,cp=2", {0, 5}, 9, "dp"},  {"dp=5,pp=3", {0, 1, 2}, 10, "dp"},
  };
  for (const Case& c : cases) {
    const Layout layout = mesh_layout(c.mesh);
    std::vector<std::int64_t> joining;
    for (std::int64_t id = 0; id < c.joiners; ++id) joining.push_back(layout.world_size() + id);
    const Recovery recovery(layout, RecoveryRequest{c.lost, joining, c.shrink});
    std::int64_t moved = 0;
    for (std::int64_t r = 0; r < recovery.layout().world_size(); ++r) {
      const std::int64_t old = recovery.old_rank(r);
      moved += old < layout.world_size() && old != r ? 1 : 0;
    }
    EXPECT_EQ(recovery.renumbered_count(), moved)
        << c.mesh << " lost " << c.lost.size() << " joiners " << c.joiners << " shrink " << c.shrink;
  }
}

}  // namespace
}  // namespace pgroups
