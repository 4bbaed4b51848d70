// One rank's interleaved-pipeline state: which chunk makes a first or last stage, and
// the sizes and ranks refused (the rule ParallelContext and pgroups.torch both hold).

#include "pgroups/layout/virtual_pipeline.hpp"

#include <gtest/gtest.h>

#include "pgroups/common/error.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

TEST(VirtualPipeline, WithoutASizeEveryRankRunsTheFirstAndTheLastChunk) {
  const VirtualPipeline none;
  EXPECT_EQ(none.size(), std::nullopt);
  EXPECT_TRUE(none.runs_first_chunk());
  EXPECT_TRUE(none.runs_last_chunk());
}

TEST(VirtualPipeline, OnlyChunkZeroIsFirstAndOnlyTheLastChunkIsLast) {
  VirtualPipeline vp;
  vp.set_size(3);
  EXPECT_TRUE(vp.runs_first_chunk());
  EXPECT_FALSE(vp.runs_last_chunk());
  vp.set_rank(1);
  EXPECT_FALSE(vp.runs_first_chunk());
  EXPECT_FALSE(vp.runs_last_chunk());
  vp.set_rank(2);
  EXPECT_FALSE(vp.runs_first_chunk());
  EXPECT_TRUE(vp.runs_last_chunk());
}

TEST(VirtualPipeline, ASizeBelowTheRankHeldResetsTheRank) {
  VirtualPipeline vp;
  vp.set_size(4);
  vp.set_rank(3);
  vp.set_size(2);
  EXPECT_EQ(vp.rank(), 0);
  vp.set_size(std::nullopt);
  vp.set_rank(7);  // no size: any non-negative chunk
  EXPECT_EQ(vp.rank(), 7);
}

TEST(VirtualPipeline, BadSizesAndRanksAreRefusedNamingTheValueAndTheRule) {
  VirtualPipeline vp;
  EXPECT_EQ(test::message_of<ConfigError>([&] { vp.set_size(0); }),
            "virtual pipeline size 0 is invalid: it must be a positive integer");
  EXPECT_EQ(test::message_of<ConfigError>([&] { vp.set_rank(-1); }),
            "virtual pipeline rank -1 is invalid: it must be a non-negative integer");
  vp.set_size(2);
  EXPECT_EQ(test::message_of<ConfigError>([&] { vp.set_rank(2); }),
            "virtual pipeline rank 2 is invalid: the virtual pipeline size is 2, so the rank must be below it");
  EXPECT_EQ(vp.rank(), 0);
}

}  // namespace
}  // namespace pgroups
