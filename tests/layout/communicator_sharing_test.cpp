// The communicator economy's decision (pgroups/layout/communicator_sharing.hpp), checked against
// an oracle that enumerates every group: two kinds share exactly when their groups are the
// same, rank order included; and the bill's figures of docs/using/context.md.

#include "pgroups/layout/communicator_sharing.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "pgroups/layout/mesh_config.hpp"
#include "support/configs.hpp"
#include "support/error_message.hpp"
#include "support/golden.hpp"

namespace pgroups {
namespace {

Layout mesh_layout(const std::string& dims, std::vector<std::string> groups, std::int64_t world = 0) {
  ParallelConfig config;
  config.world_size = world;
  config.mesh = MeshConfig{parse_mesh_dims(dims), std::move(groups)};
  return Layout(config);
}

// Every claim of communicator_sharing, against the enumerated groups of every kind.
void expect_sharing_matches_enumeration(const Layout& layout) {
  const auto kinds = layout.group_kinds();
  const std::vector<KindSharing> sharing = communicator_sharing(layout);
  ASSERT_EQ(sharing.size(), kinds.size());
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    SCOPED_TRACE(kinds[k].name);
    const auto groups = layout.groups(k);
    switch (sharing[k].source) {
      case CommSource::world:
        ASSERT_EQ(groups.size(), 1U);
        EXPECT_EQ(static_cast<std::int64_t>(groups[0].size()), layout.world_size());
        break;
      case CommSource::singleton:
        for (const auto& group : groups) EXPECT_EQ(group.size(), 1U);
        break;
      case CommSource::shared:
        ASSERT_LT(sharing[k].owner, k);
        EXPECT_EQ(sharing[sharing[k].owner].source, CommSource::own);
        EXPECT_EQ(groups, layout.groups(sharing[k].owner)) << "shares with " << kinds[sharing[k].owner].name;
        break;
      case CommSource::own:
        // No earlier owner has the same groups, and it is neither a world nor a singleton kind.
        EXPECT_GT(layout.group_size(k), 1);
        for (std::size_t j = 0; j < k; ++j) {
          if (sharing[j].source == CommSource::own) {
            EXPECT_NE(groups, layout.groups(j)) << "missed sharing with " << kinds[j].name;
          }
        }
        break;
    }
  }
}

class SharingGolden : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(SharingGolden, SharedKindsAreExactlyThoseWithEqualGroups) {
  const nlohmann::json golden = test::load_json(GetParam());
  expect_sharing_matches_enumeration(Layout(test::config_from_golden(golden.at("config"))));
}

INSTANTIATE_TEST_SUITE_P(GoldenFiles, SharingGolden, ::testing::ValuesIn(test::golden_files("golden")),
                         test::test_name);

TEST(CommunicatorSharing, MeshesOfEveryShapeShareExactlyTheirEqualPartitions) {
  // Every subset of three dimensions with sizes 1 or 2 and 3, every token over them.
  const std::vector<std::string> tokens = {"tp", "cp", "dp", "tp-cp", "tp-dp", "cp-dp", "tp-cp-dp"};
  for (int a : {1, 2, 3}) {
    for (int b : {1, 2}) {
      for (int c : {1, 3}) {
        const std::string dims = fmt::format("tp={},cp={},dp={}", a, b, c);
        SCOPED_TRACE(dims);
        expect_sharing_matches_enumeration(mesh_layout(dims, tokens));
        expect_sharing_matches_enumeration(
            mesh_layout(dims + ",pp=2", {"tp", "cp-pp", "pp", "embd", "pos_embd", "dp"}));
      }
    }
  }
}

TEST(CommunicatorSharing, SharingOffGivesEveryKindButGlobalItsOwn) {
  const Layout layout = mesh_layout("tp=2,cp=1,ep=1,dp=4", {"tp", "cp", "ep", "dp", "tp-cp", "dp-cp", "tp-dp"});
  for (const KindSharing& kind : communicator_sharing(layout, false)) EXPECT_EQ(kind.source, CommSource::own);
}

TEST(CommunicatorSharing, ASelectionLeavingOutAPartitionsOwnerMakesItsFirstSelectedKindTheOwner) {
  // tp-cp is tp's partition: selected without tp it must create its own, not borrow tp's
  // communicator that a context for this selection never creates.
  const Layout layout = mesh_layout("tp=2,cp=1,ep=1,dp=4", {"tp", "cp", "ep", "dp", "tp-cp", "dp-cp", "tp-dp"});
  const std::size_t tp = layout.group_kind_index("tp");
  const std::size_t tp_cp = layout.group_kind_index("tp-cp");
  const std::size_t dp_cp = layout.group_kind_index("dp-cp");
  std::vector<bool> selected(layout.group_kinds().size(), true);
  selected[tp] = false;
  const std::vector<KindSharing> sharing = communicator_sharing(layout, true, selected);
  EXPECT_EQ(sharing[tp_cp].source, CommSource::own);
  EXPECT_EQ(sharing[tp_cp].owner, tp_cp);
  EXPECT_EQ(sharing[tp].source, CommSource::own);  // never created, never lends
  // Owners that are selected still lend.
  EXPECT_EQ(sharing[dp_cp].source, CommSource::shared);
  EXPECT_EQ(sharing[dp_cp].owner, layout.group_kind_index("dp"));
  // Everything selected: the same as the whole plan's sharing.
  const std::vector<KindSharing> all = communicator_sharing(layout, true, std::vector<bool>(selected.size(), true));
  const std::vector<KindSharing> plain = communicator_sharing(layout);
  for (std::size_t k = 0; k < all.size(); ++k) {
    EXPECT_EQ(all[k].source, plain[k].source);
    EXPECT_EQ(all[k].owner, plain[k].owner);
  }
}

TEST(CommunicatorSharing, ASelectionOfTheWrongLengthIsAConfigError) {
  const Layout layout = mesh_layout("tp=2,dp=4", {"tp", "dp"});
  EXPECT_THROW((void)communicator_sharing(layout, true, std::vector<bool>{true}), ConfigError);
}

TEST(CommunicatorBill, TheIssueMeshHasSevenKindsThreeDistinctTwoSingletonsAndCreatesThree) {
  const Layout layout = mesh_layout("tp=2,cp=1,ep=1,dp=4", {"tp", "cp", "ep", "dp", "tp-cp", "dp-cp", "tp-dp"});
  for (std::int64_t rank = 0; rank < 8; ++rank) {
    // The world's duplicate, tp and dp; tp-dp is the world, tp-cp is tp, dp-cp is dp.
    EXPECT_EQ(communicator_bill(layout, rank), (CommunicatorBill{7, 3, 2, 3}));
    // Sharing off: the world's duplicate and a communicator per kind of two or more ranks.
    EXPECT_EQ(communicator_bill(layout, rank, false), (CommunicatorBill{7, 3, 2, 6}));
  }
}

TEST(CommunicatorBill, OneDimensionalTensorOverTheWholeWorldCreatesOnlyTheWorld) {
  ParallelConfig config = test::preset_config(8, 1, 8, TensorMode::tensor_1d);
  EXPECT_EQ(communicator_bill(Layout(config), 3).created, 1);
}

TEST(CommunicatorBill, MegatronMeshAtAThousandRanksCostsSevenOnTheFirstStageAndSixInTheMiddle) {
  const Layout layout = mesh_layout("tp=8,cp=1,ep=1,dp=16,pp=8",
                                    {"tp", "cp", "ep", "dp", "pp", "tp-pp", "tp-dp", "dp-cp", "tp-cp", "embd"}, 1024);
  EXPECT_EQ(communicator_bill(layout, 5), (CommunicatorBill{10, 6, 2, 7}));
  EXPECT_EQ(communicator_bill(layout, 300), (CommunicatorBill{10, 6, 2, 6}));  // stage 2: in no embd group
  EXPECT_EQ(largest_communicator_bill(layout), (CommunicatorBill{10, 6, 2, 7}));
}

TEST(CommunicatorBill, AnswersAtAMillionRanksWithoutEnumeratingTheWorld) {
  const Layout layout = mesh_layout("tp=8,dp=1024,pp=128", {"tp", "dp", "pp", "tp-dp", "embd"});
  EXPECT_EQ(communicator_bill(layout, 1'048'575), (CommunicatorBill{5, 5, 0, 6}));
}

TEST(CommunicatorBill, ARankOutsideTheWorldIsAConfigError) {
  const Layout layout = mesh_layout("tp=2,dp=2", {"tp", "dp"});
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)communicator_bill(layout, 4); }),
            "rank 4 is outside the world of 4 ranks (valid: 0..3)");
}

TEST(CreatedKinds, AreTheOwnKindsOfMoreThanOneRankThatHaveTheRank) {
  const Layout layout = mesh_layout("tp=2,dp=4,pp=1", {"tp", "dp", "pp", "tp-dp"});
  EXPECT_EQ(created_kinds(layout, 0), (std::vector<std::size_t>{0, 1}));  // pp: one rank; tp-dp: the world
  EXPECT_EQ(created_kinds(layout, 0, false), (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_EQ(static_cast<std::int64_t>(created_kinds(layout, 5).size()) + 1, communicator_bill(layout, 5).created);
}

}  // namespace
}  // namespace pgroups
