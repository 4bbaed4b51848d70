// Properties every valid layout must have, checked over many random configurations.

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "pgroups/layout/layout.hpp"
#include "support/configs.hpp"

namespace pgroups {
namespace {

ParallelConfig random_valid_config(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, 5);
  std::uniform_int_distribution<std::int64_t> small(1, 4);
  ParallelConfig c;
  c.tensor_mode = static_cast<TensorMode>(pick(rng));
  const std::int64_t q = small(rng);
  switch (c.tensor_mode) {
    case TensorMode::tensor_2d: c.tensor_size = q * q; break;
    case TensorMode::tensor_2p5d:
      c.depth = small(rng);
      c.tensor_size = q * q * *c.depth;
      break;
    case TensorMode::tensor_3d:
      c.tensor_size = std::min<std::int64_t>(q, 3) * std::min<std::int64_t>(q, 3) * std::min<std::int64_t>(q, 3);
      break;
    default: c.tensor_size = small(rng) * small(rng); break;
  }
  c.pipeline = small(rng);
  c.world_size = c.tensor_size * c.pipeline * small(rng);
  c.legacy_sequence_dp = pick(rng) == 0;
  return c;
}

TEST(LayoutProperties, EveryModePartitionsTheWorldIntoAscendingGroupsWithLocalRankAsIndex) {
  std::mt19937_64 rng(20261129);
  for (int trial = 0; trial < 300; ++trial) {
    const ParallelConfig config = random_valid_config(rng);
    SCOPED_TRACE(describe(config));
    const Layout layout(config);
    const std::int64_t w = layout.world_size();
    EXPECT_EQ(layout.data_parallel_size() * layout.pipeline_size() * layout.tensor_size(), w);
    for (ParallelMode mode : layout.modes()) {
      SCOPED_TRACE(std::string(mode_name(mode)));
      const auto groups = layout.groups(mode);
      ASSERT_EQ(static_cast<std::int64_t>(groups.size()), layout.group_count(mode));
      std::vector<int> seen(static_cast<std::size_t>(w), 0);
      for (std::size_t g = 0; g < groups.size(); ++g) {
        const auto& group = groups[g];
        ASSERT_EQ(static_cast<std::int64_t>(group.size()), layout.group_size(mode));
        if (g > 0) {
          EXPECT_LT(groups[g - 1].front(), group.front());
        }
        for (std::size_t i = 0; i < group.size(); ++i) {
          if (i > 0) {
            EXPECT_LT(group[i - 1], group[i]);
          }
          const std::int64_t rank = group[i];
          ++seen[static_cast<std::size_t>(rank)];
          EXPECT_EQ(layout.local_rank(rank, mode), static_cast<std::int64_t>(i));
          EXPECT_EQ(layout.group_index(rank, mode), static_cast<std::int64_t>(g));
          EXPECT_EQ(layout.group_member(rank, mode, static_cast<std::int64_t>(i)), rank);
        }
        EXPECT_EQ(layout.group_of(group.back(), mode), group);
      }
      for (int count : seen) EXPECT_EQ(count, 1);
    }
  }
}

TEST(LayoutProperties, ModeGroupSizesAreTheSpecifiedProducts) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const ParallelConfig config = random_valid_config(rng);
    SCOPED_TRACE(describe(config));
    const Layout layout(config);
    const std::int64_t q = layout.tensor_grid_dim();
    EXPECT_EQ(layout.group_size(ParallelMode::global), layout.world_size());
    EXPECT_EQ(layout.group_size(ParallelMode::data), layout.data_parallel_size());
    EXPECT_EQ(layout.group_size(ParallelMode::model), layout.pipeline_size() * layout.tensor_size());
    EXPECT_EQ(layout.group_size(ParallelMode::tensor), layout.tensor_size());
    EXPECT_EQ(layout.has_kind(ParallelMode::pipe), layout.pipeline_size() > 1);
    if (layout.has_kind(ParallelMode::pipe)) {
      EXPECT_EQ(layout.group_size(ParallelMode::pipe), layout.pipeline_size());
    }
    switch (config.tensor_mode) {
      case TensorMode::tensor_2d:
        EXPECT_EQ(layout.group_size(ParallelMode::tensor_2d_row), q);
        EXPECT_EQ(layout.group_size(ParallelMode::tensor_2d_col), q);
        break;
      case TensorMode::tensor_2p5d:
        EXPECT_EQ(layout.group_size(ParallelMode::tensor_2p5d_dep), *config.depth);
        EXPECT_EQ(layout.group_size(ParallelMode::tensor_2p5d_xz), q * *config.depth);
        break;
      case TensorMode::tensor_3d:
        EXPECT_EQ(layout.group_size(ParallelMode::tensor_3d_input_x_weight), q * q);
        EXPECT_EQ(layout.group_size(ParallelMode::tensor_3d_output), q);
        break;
      case TensorMode::sequence:
        EXPECT_EQ(layout.group_size(ParallelMode::sequence_dp),
                  config.legacy_sequence_dp ? layout.world_size() / layout.pipeline_size()
                                            : layout.data_parallel_size() * layout.tensor_size());
        break;
      default: break;
    }
  }
}

TEST(LayoutProperties, CoordinatesFollowTensorThenPipelineThenData) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    const ParallelConfig config = random_valid_config(rng);
    const Layout layout(config);
    const std::int64_t tp = layout.tensor_size();
    const std::int64_t pp = layout.pipeline_size();
    for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
      const auto coords = layout.coordinates(rank);
      ASSERT_GE(coords.size(), 3U);
      EXPECT_EQ(coords[0].value * tp * pp + coords[1].value * tp + coords[2].value, rank);
      EXPECT_EQ(coords[1].value, layout.local_rank(rank, ParallelMode::model) / tp);
      if (layout.tensor_grid_dim() > 0) {
        // Sub-coordinates recombine into the tensor index: t = a + q*(b + q*c).
        std::int64_t t = 0;
        std::int64_t stride = 1;
        for (std::size_t i = 3; i < coords.size(); ++i) {
          t += coords[i].value * stride;
          stride *= coords[i].size;
        }
        EXPECT_EQ(t, coords[2].value);
      }
    }
  }
}

TEST(LayoutAtScale, OneRankOfABillionRankWorldIsAnsweredWithoutEnumeration) {
  ParallelConfig config = test::preset_config(std::int64_t{1} << 30, 16, 64, TensorMode::tensor_3d);
  const Layout layout(config);
  const std::int64_t rank = 987654321;
  EXPECT_EQ(layout.local_rank(rank, ParallelMode::global), rank);
  EXPECT_EQ(layout.group_size(ParallelMode::data), (std::int64_t{1} << 30) / 1024);
  const auto group = layout.group_of(rank, ParallelMode::tensor_3d_input_x_weight);
  ASSERT_EQ(group.size(), 16U);
  EXPECT_EQ(group[static_cast<std::size_t>(layout.local_rank(rank, ParallelMode::tensor_3d_input_x_weight))], rank);
  const std::int64_t last = layout.group_member(rank, ParallelMode::data, layout.group_size(ParallelMode::data) - 1);
  EXPECT_EQ(last % 1024, rank % 1024);
  EXPECT_GT(last, (std::int64_t{1} << 30) - 1024 - 1);
}

TEST(LayoutAtScale, WorldsBeyondThirtyOneBitsUseSixtyFourBitRanks) {
  ParallelConfig config = test::preset_config(std::int64_t{1} << 40, 1024, 4, TensorMode::tensor_2d);
  const Layout layout(config);
  const std::int64_t rank = (std::int64_t{1} << 40) - 1;
  EXPECT_EQ(layout.local_rank(rank, ParallelMode::pipe), 1023);
  EXPECT_EQ(layout.group_member(rank, ParallelMode::data, 0), rank % 4096);
}

TEST(LayoutSeeds, TensorSeedOffsetsByTensorRankAndPipelineStage) {
  ParallelConfig config = test::preset_config(16, 2, 4, TensorMode::tensor_1d);
  config.seed = 42;
  const Layout layout(config);
  EXPECT_EQ(layout.seed(6, ParallelMode::data), 42);
  EXPECT_EQ(layout.seed(6, ParallelMode::tensor), 42 + 2 + 1024 * 1);
}

}  // namespace
}  // namespace pgroups
