// Every creation strategy gives each rank exactly its layout group, in local-rank
// order, for every mode of every configuration that fits the world; none leaks.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/mpi/strategy.hpp"
#include "support/error_message.hpp"

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
      const Communicator comm = create_group_communicator(world, layout, mode, GetParam());
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
    (void)create_group_communicator(Communicator::borrow(MPI_COMM_WORLD), layout, ParallelMode::data, GetParam());
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
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)parse_creation_strategy("per-group"); }),
            "unknown creation strategy 'per-group'; the strategy must be one of create_group (the default), "
            "comm_split, per_group, comm_create (did you mean per_group?)");
}

TEST(CreationStrategyNames, SplitIsADeprecatedAliasOfTheDefaultNamingTheCallItRuns) {
  EXPECT_EQ(parse_creation_strategy("split"), kDefaultCreationStrategy);
  EXPECT_EQ(strategy_deprecation("split"),
            "strategy 'split' is deprecated: it runs MPI_Comm_create_group, not MPI_Comm_split; say create_group "
            "(the default), or comm_split for MPI_Comm_split");
  for (CreationStrategy strategy : kAllCreationStrategies) EXPECT_EQ(strategy_deprecation(strategy_name(strategy)), "");
}

TEST(CreationStrategyNames, CreateGroupTagsAreDistinctAndWithinTheGuaranteedBound) {
  std::set<int> tags;
  for (std::size_t kind = 0; kind < 64; ++kind) {
    tags.insert(create_group_tag(kind));
    EXPECT_LE(create_group_tag(kind), 32767);
    EXPECT_GE(create_group_tag(kind), 0);
  }
  EXPECT_EQ(tags.size(), 64U);
  EXPECT_LE(create_group_tag(std::size_t{1} << 40), 32767);
}

TEST_P(EachStrategy, ARankOutsideAPartialKindGetsNoCommunicatorButTakesPart) {
  // Megatron's embedding groups: the first and last stage of each pipeline.
  const Communicator world = Communicator::borrow(MPI_COMM_WORLD).dup();
  const int rank = world.rank();
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"pp", world.size()}}, .groups = {"pp", "embd", "pos_embd"}};
  const Layout layout(config);
  for (const std::string_view name : {"embd", "pos_embd"}) {
    SCOPED_TRACE(std::string(name));
    const std::size_t kind = layout.group_kind_index(name);
    const Communicator comm = create_group_communicator(world, layout, kind, GetParam());
    EXPECT_EQ(comm.is_null(), !layout.is_member(rank, kind));
    if (comm.is_null()) continue;
    const test::Observed seen = test::observe(comm.get(), rank);
    EXPECT_EQ(seen.members, layout.group_of(rank, kind));
    EXPECT_EQ(seen.rank, layout.local_rank(rank, kind));
  }
}

}  // namespace
}  // namespace pgroups::mpi
