// Every creation strategy gives each rank exactly its layout group, in local-rank
// order, for every mode of every configuration that fits the world; none leaks.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "mpi_test_support.hpp"
#include "pgroups/error.hpp"
#include "pgroups/mpi/strategy.hpp"

namespace pgroups::mpi {
namespace {

class EachStrategy : public ::testing::TestWithParam<CreationStrategy> {};

TEST_P(EachStrategy, GivesEveryRankItsLayoutGroupInLocalRankOrder) {
  const Communicator world = Communicator::borrow(MPI_COMM_WORLD).dup();
  const std::int64_t before = Communicator::live_count();
  const int rank = world.rank();
  for (const ParallelConfig& config : test::configs_for_world(world.size())) {
    SCOPED_TRACE(describe(config));
    const Layout layout(config);
    for (ParallelMode mode : layout.modes()) {
      SCOPED_TRACE(std::string(mode_name(mode)));
      const Communicator comm = create_mode_communicator(world, layout, mode, GetParam());
      EXPECT_TRUE(comm.owns());
      const test::Observed seen = test::observe(comm.get(), rank);
      EXPECT_EQ(seen.size, layout.group_size(mode));
      EXPECT_EQ(seen.rank, layout.local_rank(rank, mode));
      EXPECT_EQ(seen.members, layout.group_of(rank, mode));
    }
  }
  EXPECT_EQ(Communicator::live_count(), before);
}

TEST_P(EachStrategy, RefusesAParentThatIsNotTheLayoutsWorld) {
  ParallelConfig config;
  config.world_size = 2 * test::world_size();
  const Layout layout(config);
  try {
    (void)create_mode_communicator(Communicator::borrow(MPI_COMM_WORLD), layout, ParallelMode::data, GetParam());
    FAIL() << "no exception";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find(fmt::format("has {} ranks", test::world_size())), std::string::npos)
        << error.what();
  }
}

std::string strategy_test_name(const ::testing::TestParamInfo<CreationStrategy>& param) {
  return std::string(strategy_name(param.param));
}

INSTANTIATE_TEST_SUITE_P(Strategies, EachStrategy, ::testing::ValuesIn(kAllCreationStrategies), strategy_test_name);

TEST(CreationStrategyNames, RoundTrip) {
  for (CreationStrategy strategy : kAllCreationStrategies) {
    EXPECT_EQ(parse_creation_strategy(strategy_name(strategy)), strategy);
  }
}

TEST(CreationStrategyNames, UnknownNameSuggestsTheClosest) {
  try {
    (void)parse_creation_strategy("per-group");
    FAIL() << "no exception";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(),
                 "unknown creation strategy 'per-group'; the strategy must be one of split (the default, "
                 "create_group), comm_split, create_group, per_group, comm_create (did you mean per_group?)");
  }
}

TEST(CreationStrategyNames, CreateGroupTagsAreDistinctAndWithinTheGuaranteedBound) {
  std::set<int> tags;
  for (ParallelMode mode : kAllParallelModes) {
    tags.insert(create_group_tag(mode));
    EXPECT_LE(create_group_tag(mode), 32767);
    EXPECT_GE(create_group_tag(mode), 0);
  }
  EXPECT_EQ(tags.size(), kAllParallelModes.size());
}

}  // namespace
}  // namespace pgroups::mpi
