// RankView (pgroups/layout/rank_view.hpp) and PartitionKey (pgroups/layout/partition_key.hpp):
// every rank of every golden layout against the layout's own enumerated group lists, a plan
// of 2^40 ranks answered at once, and the non-member's StateError.

#include "pgroups/layout/rank_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/layout/mesh_config.hpp"
#include "support/configs.hpp"
#include "support/error_message.hpp"
#include "support/golden.hpp"

namespace pgroups {
namespace {

using test::message_of;

Layout mesh_layout(const std::string& dims, std::vector<std::string> groups, std::int64_t world = 0) {
  ParallelConfig config;
  config.world_size = world;
  config.mesh = MeshConfig{parse_mesh_dims(dims), std::move(groups)};
  return Layout(config);
}

Layout golden_layout(const std::filesystem::path& path) {
  const nlohmann::json golden = test::load_json(path);
  const auto& config = golden.at("config");
  if (!config.contains("order")) return Layout(test::config_from_golden(config));
  std::vector<MeshDim> sizes;
  for (const auto& [name, size] : config.at("sizes").items()) sizes.push_back({name, size.get<std::int64_t>()});
  std::vector<std::string> tokens;
  for (const auto& [token, _] : golden.at("modes").items()) tokens.push_back(token);
  ParallelConfig c;
  c.world_size = config.at("world_size").get<std::int64_t>();
  c.mesh = MeshConfig{mesh_dims_from_order(config.at("order").get<std::string>(), sizes), tokens};
  return Layout(c);
}

// Every answer of every rank's view against the enumerated groups of each kind.
void expect_views_match_enumeration(const Layout& layout) {
  const auto kinds = layout.group_kinds();
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    SCOPED_TRACE(kinds[kind].name);
    const auto groups = layout.groups(kind);
    for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
      const RankView view(layout, rank);
      const auto found = std::find_if(groups.begin(), groups.end(),
                                      [rank](const auto& g) { return std::find(g.begin(), g.end(), rank) != g.end(); });
      ASSERT_EQ(view.is_member(kind), found != groups.end()) << "rank " << rank;
      if (found == groups.end()) {
        const std::string message = message_of<StateError>([&] { (void)view.size(kind); });
        EXPECT_NE(message.find("rank " + std::to_string(rank)), std::string::npos) << message;
        EXPECT_NE(message.find("kind " + kinds[kind].name + ":"), std::string::npos) << message;
        EXPECT_FALSE(message_of<StateError>([&] { (void)view.local_rank(kind); }).empty());
        EXPECT_FALSE(message_of<StateError>([&] { (void)view.members(kind); }).empty());
        EXPECT_FALSE(message_of<StateError>([&] { (void)view.next_rank(kind); }).empty());
        continue;
      }
      const auto& group = *found;
      const auto n = static_cast<std::int64_t>(group.size());
      const auto local = static_cast<std::int64_t>(std::find(group.begin(), group.end(), rank) - group.begin());
      EXPECT_EQ(view.members(kind), group) << "rank " << rank;
      EXPECT_EQ(view.size(kind), n);
      EXPECT_EQ(view.local_rank(kind), local);
      EXPECT_EQ(view.next_rank(kind), group[static_cast<std::size_t>((local + 1) % n)]);
      EXPECT_EQ(view.previous_rank(kind), group[static_cast<std::size_t>((local + n - 1) % n)]);
      EXPECT_EQ(view.first_rank(kind), group.front());
      EXPECT_EQ(view.last_rank(kind), group.back());
      EXPECT_EQ(view.is_first(kind), local == 0);
      EXPECT_EQ(view.is_last(kind), local == n - 1);
      EXPECT_EQ(view.group_index(kind), found - groups.begin());
      EXPECT_EQ(view.seed(kind), layout.seed(rank, kind));
    }
  }
}

// Equal keys exactly for equal group lists (rank order included), over every pair of kinds.
void expect_keys_match_enumeration(const Layout& layout) {
  const auto kinds = layout.group_kinds();
  for (std::size_t a = 0; a < kinds.size(); ++a) {
    for (std::size_t b = 0; b < kinds.size(); ++b) {
      EXPECT_EQ(layout.partition_key(a) == layout.partition_key(b), layout.groups(a) == layout.groups(b))
          << kinds[a].name << " " << layout.partition_key(a).text() << " vs " << kinds[b].name << " "
          << layout.partition_key(b).text();
    }
  }
}

class RankViewGolden : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(RankViewGolden, EveryRanksAnswersEqualTheEnumeratedGroups) {
  const Layout layout = golden_layout(GetParam());
  expect_views_match_enumeration(layout);
  expect_keys_match_enumeration(layout);
}

std::vector<std::filesystem::path> every_golden_file() {
  std::vector<std::filesystem::path> files = test::golden_files("golden");
  for (const auto& path : test::golden_files("golden-mesh")) files.push_back(path);
  return files;
}

INSTANTIATE_TEST_SUITE_P(GoldenFiles, RankViewGolden, ::testing::ValuesIn(every_golden_file()), test::test_name);

TEST(RankView, MeshesWithEmbeddingKindsAnswerMembersAndNonMembersAlike) {
  for (const char* dims : {"tp=2,dp=2,pp=4", "tp=1,dp=3,pp=2", "tp=2,cp=1,dp=1,pp=3", "tp=2,dp=1,pp=1"}) {
    SCOPED_TRACE(dims);
    const Layout layout = mesh_layout(dims, {"tp", "pp", "dp", "tp-pp", "embd", "pos_embd"});
    expect_views_match_enumeration(layout);
    expect_keys_match_enumeration(layout);
  }
}

TEST(RankView, LegacySequenceDataParallelBlocksKeyedWithTheKindsOfTheSameGroups) {
  for (const auto& [world, pipeline, tensor] :
       {std::tuple{8, 2, 4}, std::tuple{8, 1, 8}, std::tuple{16, 2, 4}, std::tuple{8, 4, 2}}) {
    ParallelConfig config = test::preset_config(world, pipeline, tensor, TensorMode::sequence);
    config.legacy_sequence_dp = true;
    const Layout layout(config);
    SCOPED_TRACE(layout.summary());
    expect_views_match_enumeration(layout);
    expect_keys_match_enumeration(layout);
  }
}

TEST(RankView, APlanOfTwoToTheFortyRanksAnswersAtOnceForAnyRank) {
  const std::int64_t world = std::int64_t{1} << 40;
  const Layout layout = mesh_layout("tp=8,dp=1073741824,pp=128", {"tp", "dp", "pp", "tp-dp", "embd"}, world);
  const RankView last(layout, world - 1);
  const std::size_t tp = last.kind("tp");
  const std::size_t pp = last.kind("pp");
  EXPECT_EQ(last.size(tp), 8);
  EXPECT_EQ(last.local_rank(tp), 7);
  EXPECT_EQ(last.next_rank(tp), world - 8);
  EXPECT_EQ(last.previous_rank(tp), world - 2);
  EXPECT_EQ(last.size(pp), 128);
  EXPECT_EQ(last.pipeline_stage(), 127);
  EXPECT_TRUE(last.is_pipeline_last_stage());
  EXPECT_TRUE(last.is_member(last.kind("embd")));  // the last stage
  EXPECT_EQ(last.members(last.kind("embd")),
            (std::vector<std::int64_t>{world - 1 - 127 * 8 * 1073741824LL, world - 1}));
  EXPECT_EQ(last.size(last.kind("tp-dp")), 8LL * 1073741824LL);
  const RankView middle(layout, world / 2);
  EXPECT_FALSE(middle.is_member(middle.kind("embd")));
  EXPECT_EQ(middle.partition_key(tp), last.partition_key(tp));
  EXPECT_EQ(communicator_bill(layout, world - 1), (CommunicatorBill{5, 5, 0, 6}));
}

TEST(RankView, ANonMemberAskingAPartialKindsSizeGetsAStateErrorNamingTheKindAndTheRank) {
  const Layout layout = mesh_layout("tp=2,dp=1,pp=4", {"tp", "pp", "embd"});
  const RankView view(layout, 3);  // stage 1 of 4: in no embd group
  EXPECT_FALSE(view.is_member(view.kind("embd")));
  EXPECT_EQ(message_of<StateError>([&] { (void)view.size(view.kind("embd")); }),
            "rank 3 is in no group of kind embd: it is a partial kind, and this rank has no communicator of it (ask "
            "is_member first)");
}

TEST(RankView, ARankOutsideTheWorldIsAConfigError) {
  const Layout layout = mesh_layout("tp=2,dp=2", {"tp", "dp"});
  EXPECT_EQ(message_of<ConfigError>([&] { (void)RankView(layout, 4); }),
            "rank 4 is outside the world of 4 ranks (valid: 0..3)");
}

TEST(RankView, FlattenedDimensionsAreTheKindsOfARunOfAdjacentDimensions) {
  const Layout layout = mesh_layout("tp=2,cp=2,dp=2,pp=2", {"tp", "cp", "dp", "pp", "tp-cp", "cp-dp", "tp-dp", "embd"});
  const RankView view(layout, 0);
  // dimensions(), slowest first: pp, dp, cp, tp.
  std::vector<std::string> names;
  for (const auto& dim : view.dimensions()) names.push_back(dim.name);
  EXPECT_EQ(names, (std::vector<std::string>{"pp", "dp", "cp", "tp"}));
  using Run = std::optional<std::pair<std::size_t, std::size_t>>;
  EXPECT_EQ(view.flattened_dims(view.kind("tp-cp")), (Run{{2, 4}}));
  EXPECT_EQ(view.flattened_dims(view.kind("cp-dp")), (Run{{1, 3}}));
  EXPECT_EQ(view.flattened_dims(view.kind("tp-dp")), Run{});  // not adjacent
  EXPECT_EQ(view.flattened_dims(view.kind("tp")), Run{});     // one dimension
  EXPECT_EQ(view.flattened_dims(view.kind("embd")), Run{});   // partial
}

TEST(RankView, AKindWhoseMeshOrderTheRankMapBreaksIsNoFlattenedDimension) {
  using Run = std::optional<std::pair<std::size_t, std::size_t>>;
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims("tp=2,dp=2"), {"tp", "dp", "tp-dp"}};
  EXPECT_EQ(RankView(Layout(config), 0).flattened_dims(2), (Run{{0, 2}}));
  // Mesh rank tp + 2 dp on launcher rank dp + 2 tp: tp and dp keep their order, but tp-dp's
  // mesh order 0, 1, 2, 3 runs on launcher ranks 0, 2, 1, 3, so its group rank is not the
  // flattened coordinate.
  config.rank_map = {0, 2, 1, 3};
  const Layout placed(config);
  EXPECT_TRUE(placed.keeps_mesh_order(0));
  EXPECT_FALSE(placed.keeps_mesh_order(2));
  EXPECT_EQ(RankView(placed, 0).flattened_dims(2), Run{});
}

TEST(PartitionKey, EmbeddingOfTwoStagesIsThePipelinesPartition) {
  const Layout layout = mesh_layout("tp=2,dp=2,pp=2", {"tp", "pp", "embd"});
  EXPECT_EQ(layout.partition_key(2), layout.partition_key(1));
  const std::vector<KindSharing> sharing = communicator_sharing(layout);
  EXPECT_EQ(sharing[2].source, CommSource::shared);
  EXPECT_EQ(sharing[2].owner, 1U);
  EXPECT_EQ(communicator_bill(layout, 0), (CommunicatorBill{3, 2, 0, 3}));
}

TEST(PartitionKey, LegacySequenceDataParallelOfTensorsBlocksSharesTensorsCommunicator) {
  // 8 ranks, pipeline 2, sequence 4: the legacy blocks of W/pipeline = 4 ranks are tensor's.
  ParallelConfig config = test::preset_config(8, 2, 4, TensorMode::sequence);
  config.legacy_sequence_dp = true;
  const Layout layout(config);
  const std::size_t sequence_dp = layout.kind_of(ParallelMode::sequence_dp);
  const std::size_t tensor = layout.kind_of(ParallelMode::tensor);
  EXPECT_EQ(layout.partition_key(sequence_dp), layout.partition_key(tensor));
  const std::vector<KindSharing> sharing = communicator_sharing(layout);
  EXPECT_EQ(sharing[sequence_dp].source, CommSource::shared);
  EXPECT_EQ(sharing[sequence_dp].owner, tensor);
  // global, data (one rank), model (the world), pipe, tensor, sequence, sequence_dp: the
  // world, pipe and tensor; not 4 with sequence_dp counted apart.
  EXPECT_EQ(communicator_bill(layout, 0).distinct, 3);
}

TEST(PartitionKey, KeysOfTwoPlansOfOneWorldCompareAcrossThem) {
  const Layout dense = mesh_layout("tp=2,cp=1,ep=1,dp=4,pp=1", {"tp", "dp", "tp-dp"});
  const Layout expert = mesh_layout("tp=2,cp=1,ep=4,dp=1,pp=1", {"tp", "ep", "tp-ep"});
  EXPECT_EQ(dense.partition_key(0), expert.partition_key(0));
  EXPECT_EQ(dense.partition_key(1), expert.partition_key(1));  // dp of 4 is ep of 4 here
  EXPECT_TRUE(dense.partition_key(2).is_world());
  EXPECT_NE(dense.partition_key(0), mesh_layout("tp=2,dp=2", {"tp"}).partition_key(0));  // another world
}

}  // namespace
}  // namespace pgroups
