// RankMap and a Layout built over one: groups of launcher ranks, ascending, local ranks as
// torch numbers them, and every bad map refused with the rule and the offending values.

#include "pgroups/layout/rank_map.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/rank_view.hpp"

namespace pgroups {
namespace {

ParallelConfig mesh_config(std::vector<MeshDim> dims, std::vector<std::string> groups, std::vector<std::int64_t> map) {
  ParallelConfig config;
  config.mesh = MeshConfig{std::move(dims), std::move(groups)};
  config.rank_map = std::move(map);
  return config;
}

std::string error_of(const ParallelConfig& config) {
  try {
    (void)Layout(config);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "no error";
}

TEST(RankMap, InvertsAPermutation) {
  const RankMap map({2, 0, 3, 1}, 4);
  EXPECT_FALSE(map.identity());
  for (std::int64_t r = 0; r < 4; ++r) EXPECT_EQ(map.mesh_rank(map.launcher_rank(r)), r);
  EXPECT_NE(map.fingerprint(), 0U);
}

TEST(RankMap, TheIdentityWrittenOutIsNoMap) {
  EXPECT_TRUE(RankMap({0, 1, 2, 3}, 4).identity());
  EXPECT_TRUE(RankMap({}, 4).identity());
  EXPECT_EQ(RankMap({0, 1, 2, 3}, 4).fingerprint(), 0U);
}

TEST(RankMap, RefusesAnEntryOutsideTheWorld) {
  try {
    (void)RankMap({0, 1, 7, 2}, 4);
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(),
                 "rank map entry 2 is 7, outside the world of 4 ranks (valid: 0..3): the map must be a "
                 "permutation of the launcher ranks");
  }
  EXPECT_THROW((void)RankMap({0, -1, 2, 3}, 4), ConfigError);
}

TEST(RankMap, RefusesADuplicateNamingBothEntries) {
  try {
    (void)RankMap({0, 1, 1, 2}, 4);
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(),
                 "rank map entries 1 and 2 are both launcher rank 1: the map must be a permutation of "
                 "the launcher ranks, each once");
  }
}

TEST(RankMap, RefusesAWrongLengthNamingTheMissingRank) {
  try {
    (void)RankMap({1, 0, 2}, 4);
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(),
                 "rank map has 3 entries, but the world has 4 ranks: entry r is the launcher rank that "
                 "runs mesh rank r, one per rank (launcher rank 3 is missing)");
  }
  EXPECT_THROW((void)RankMap({0, 1, 2}, 4), ConfigError);
  EXPECT_THROW((void)RankMap({0, 1, 2, 3, 4}, 4), ConfigError);
}

// tp=2, dp=2, pp=2 (tp fastest): the map swaps mesh ranks 1 <-> 2 and 5 <-> 6, so that the dp
// neighbours (0, 2) and (1, 3) run on launcher ranks (0, 1) and (2, 3), and tp's groups become
// {0, 2} and {1, 3}; every one-dimension kind still ascends.
const std::vector<std::int64_t> kSwap = {0, 2, 1, 3, 4, 6, 5, 7};

TEST(RankMappedLayout, GroupsAreTheMappedRanksAscending) {
  const Layout layout(mesh_config({{"tp", 2}, {"dp", 2}, {"pp", 2}}, {"tp", "dp", "pp", "tp-dp"}, kSwap));
  const std::size_t tp = layout.group_kind_index("tp");
  const std::size_t dp = layout.group_kind_index("dp");
  const std::size_t tpdp = layout.group_kind_index("tp-dp");
  EXPECT_EQ(layout.group_of(0, tp), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(layout.group_of(1, tp), (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(layout.group_of(0, dp), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(layout.group_of(6, tpdp), (std::vector<std::int64_t>{4, 5, 6, 7}));
  const auto all = layout.groups(tp);
  EXPECT_EQ(all, (std::vector<std::vector<std::int64_t>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
}

TEST(RankMappedLayout, EveryQueryAgreesWithTheGroupsOnEveryRank) {
  // tp=2, cp=2, dp=2, pp=2 under a map that keeps every one-dimension kind's order but
  // reorders the two-dimension ones: launcher ranks hold cp before tp.
  const Mesh mesh({{"tp", 2}, {"cp", 2}, {"dp", 2}, {"pp", 2}});
  std::vector<std::int64_t> map(16);
  for (std::int64_t r = 0; r < 16; ++r) {
    const auto c = mesh.coordinates(r);
    map[static_cast<std::size_t>(r)] = c[1] + 2 * c[0] + 4 * c[2] + 8 * c[3];
  }
  const Layout layout(
      mesh_config({{"tp", 2}, {"cp", 2}, {"dp", 2}, {"pp", 2}}, {"tp", "cp", "dp", "pp", "tp-cp", "tp-dp"}, map));
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    const auto groups = layout.groups(kind);
    ASSERT_EQ(static_cast<std::int64_t>(groups.size()), layout.group_count(kind));
    std::vector<std::int64_t> seen;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& group = groups[g];
      EXPECT_TRUE(std::is_sorted(group.begin(), group.end()));
      EXPECT_EQ(layout.group_leader(kind, static_cast<std::int64_t>(g)), group.front());
      for (std::size_t i = 0; i < group.size(); ++i) {
        const std::int64_t rank = group[i];
        seen.push_back(rank);
        EXPECT_EQ(layout.group_of(rank, kind), group);
        EXPECT_EQ(layout.local_rank(rank, kind), static_cast<std::int64_t>(i));
        EXPECT_EQ(layout.group_index(rank, kind), static_cast<std::int64_t>(g));
        EXPECT_EQ(layout.group_member(rank, kind, static_cast<std::int64_t>(i)), rank);
        const RankView view(layout, rank);
        EXPECT_EQ(view.members(kind), group);
        EXPECT_EQ(view.next_rank(kind), group[(i + 1) % group.size()]);
      }
    }
    std::sort(seen.begin(), seen.end());
    std::vector<std::int64_t> world(16);
    std::iota(world.begin(), world.end(), 0);
    EXPECT_EQ(seen, world) << layout.group_kinds()[kind].name;
  }
  // The tp-cp groups are launcher blocks of 4; the pipeline stage follows the mesh.
  EXPECT_EQ(layout.group_of(5, layout.group_kind_index("tp-cp")), (std::vector<std::int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(layout.pipeline_stage(9), 1);
  EXPECT_EQ(layout.coordinates(2).back().name, "tp");
  EXPECT_EQ(layout.coordinates(2).back().value, 1);  // launcher 2 runs mesh rank 1: tp coordinate 1
}

TEST(RankMappedLayout, RefusesAMapThatBreaksAOneDimensionKindsOrder) {
  // Launcher ranks reversed: tp's group of mesh ranks [0, 1] runs on [7, 6].
  const std::string message =
      error_of(mesh_config({{"tp", 2}, {"dp", 2}, {"pp", 2}}, {"tp", "dp"}, {7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(message,
            "rank map breaks the order of kind 'tp': its group of mesh ranks [0, 1] runs on launcher ranks [7, 6], "
            "which do not ascend along tp; torch and MPI number a group by ascending rank, so a kind of one dimension "
            "must keep its mesh order (the pipeline stage, the DeviceMesh coordinate and the group rank would "
            "disagree)");
}

TEST(RankMappedLayout, RefusesAPipelineOutOfOrderEvenWithoutAPipelineKindAsked) {
  // pp reversed only: embd sits on pp's groups and pp is asked.
  const std::string message = error_of(mesh_config({{"tp", 2}, {"pp", 2}}, {"tp", "pp"}, {2, 3, 0, 1}));
  EXPECT_NE(message.find("kind 'pp'"), std::string::npos) << message;
  EXPECT_NE(message.find("[0, 2] runs on launcher ranks [2, 0]"), std::string::npos) << message;
}

TEST(RankMappedLayout, ANonPermutationIsAConfigError) {
  EXPECT_EQ(error_of(mesh_config({{"tp", 2}, {"dp", 2}}, {}, {0, 1, 2, 2})),
            "rank map entries 2 and 3 are both launcher rank 2: the map must be a permutation of the launcher "
            "ranks, each once");
}

TEST(RankMappedLayout, PresetsTakeAMapToo) {
  ParallelConfig config;
  config.world_size = 8;
  config.pipeline = 2;
  config.tensor_size = 2;
  config.rank_map = kSwap;
  const Layout layout(config);
  EXPECT_EQ(layout.group_of(0, ParallelMode::tensor), (std::vector<std::int64_t>{0, 2}));
  EXPECT_THROW(validate([] {
                 ParallelConfig bad;
                 bad.world_size = 4;
                 bad.rank_map = {0, 0, 1, 2};
                 return bad;
               }()),
               ConfigError);
}

TEST(RankMappedLayout, PartitionKeysOfDifferentMapsDiffer) {
  const Layout plain(mesh_config({{"tp", 2}, {"dp", 2}, {"pp", 2}}, {"tp"}, {}));
  const Layout mapped(mesh_config({{"tp", 2}, {"dp", 2}, {"pp", 2}}, {"tp"}, kSwap));
  const Layout again(mesh_config({{"tp", 2}, {"dp", 2}, {"pp", 2}}, {"tp"}, kSwap));
  EXPECT_NE(plain.partition_key(0), mapped.partition_key(0));
  EXPECT_EQ(mapped.partition_key(0), again.partition_key(0));
}

TEST(RankMappedLayout, TheMapIsASetting) {
  const ParallelConfig mapped = mesh_config({{"tp", 2}, {"dp", 2}}, {}, {0, 2, 1, 3});
  const ParallelConfig identity = mesh_config({{"tp", 2}, {"dp", 2}}, {}, {0, 1, 2, 3});
  const ParallelConfig none = mesh_config({{"tp", 2}, {"dp", 2}}, {}, {});
  EXPECT_NE(config_setting_fields(mapped), config_setting_fields(none));
  EXPECT_EQ(config_setting_fields(identity), config_setting_fields(none));
  EXPECT_NE(config_setting_text(mapped).find("rank_map=0,2,1,3"), std::string::npos);
}

}  // namespace
}  // namespace pgroups
