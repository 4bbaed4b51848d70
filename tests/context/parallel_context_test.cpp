// What each rank can ask a ParallelContext (docs/reference/spec.md §6), checked against the live
// communicators and the layout, for every configuration that fits the world.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

class EveryFittingConfig : public ::testing::Test {
 protected:
  template <typename Check>
  void for_each_context(Check check) {
    for (const ParallelConfig& config : test::configs_for_world(test::world_size())) {
      SCOPED_TRACE(describe(config));
      ParallelConfig from_communicator = config;
      from_communicator.world_size = 0;
      const ParallelContext context(from_communicator, MPI_COMM_WORLD);
      check(context);
    }
  }
};

TEST_F(EveryFittingConfig, LocalRankAndWorldSizeAreWhatTheCommunicatorSays) {
  for_each_context([](const ParallelContext& context) {
    EXPECT_EQ(context.config().world_size, test::world_size());
    EXPECT_EQ(context.global_rank(), test::world_rank());
    for (ParallelMode mode : context.modes()) {
      SCOPED_TRACE(std::string(mode_name(mode)));
      const GroupHandle group = context.get_group(mode);
      EXPECT_EQ(group.group(), mode_name(mode));
      EXPECT_EQ(group.backend(), Backend::mpi);
      EXPECT_EQ(context.get_cpu_group(mode), group);
      const test::Observed seen = test::observe(group.mpi(), static_cast<int>(context.global_rank()));
      EXPECT_EQ(context.local_rank(mode), seen.rank);
      EXPECT_EQ(context.world_size(mode), seen.size);
      EXPECT_EQ(context.ranks_in_group(mode), seen.members);
      EXPECT_EQ(context.local_rank(mode), context.layout().local_rank(context.global_rank(), mode));
    }
  });
}

TEST_F(EveryFittingConfig, ModesAreTheLayoutsInCreationOrder) {
  for_each_context([](const ParallelContext& context) {
    const auto expected = context.layout().modes();
    EXPECT_EQ(context.modes(), std::vector<ParallelMode>(expected.begin(), expected.end()));
    for (ParallelMode mode : kAllParallelModes) {
      EXPECT_EQ(context.is_initialized(mode), context.layout().has_kind(mode)) << mode_name(mode);
    }
  });
}

TEST_F(EveryFittingConfig, NextAndPreviousRanksFollowTheRing) {
  for_each_context([](const ParallelContext& context) {
    for (ParallelMode mode : context.modes()) {
      SCOPED_TRACE(std::string(mode_name(mode)));
      const auto ranks = context.ranks_in_group(mode);
      const auto n = static_cast<std::int64_t>(ranks.size());
      const std::int64_t local = context.local_rank(mode);
      EXPECT_EQ(context.next_global_rank(mode), ranks[static_cast<std::size_t>((local + 1) % n)]);
      EXPECT_EQ(context.prev_global_rank(mode), ranks[static_cast<std::size_t>((local + n - 1) % n)]);
      EXPECT_EQ(context.is_first_rank(mode), local == 0);
      EXPECT_EQ(context.is_last_rank(mode), local == n - 1);

      // Around the live ring: what the previous member sends is its global rank.
      const MPI_Comm comm = context.get_group(mode).mpi();
      const int me = static_cast<int>(context.global_rank());
      int received = -1;
      MPI_Sendrecv(&me, 1, MPI_INT, static_cast<int>((local + 1) % n), 0, &received, 1, MPI_INT,
                   static_cast<int>((local + n - 1) % n), 0, comm, MPI_STATUS_IGNORE);
      EXPECT_EQ(received, context.prev_global_rank(mode));
    }
  });
}

TEST_F(EveryFittingConfig, SeedsAreTheBaseSeedExceptTensorsPerStageAndIndex) {
  for_each_context([](const ParallelContext& context) {
    const std::int64_t base = context.config().seed;
    const std::int64_t tensor_local = context.local_rank(ParallelMode::tensor);
    const std::int64_t stage = context.is_initialized(ParallelMode::pipe) ? context.local_rank(ParallelMode::pipe) : 0;
    EXPECT_EQ(context.seed(ParallelMode::data), base);
    EXPECT_EQ(context.seed(ParallelMode::global), base);
    EXPECT_EQ(context.seed(ParallelMode::tensor), base + tensor_local + 1024 * stage);
  });
}

TEST_F(EveryFittingConfig, PipelineStagesAreThePipeGroupsEnds) {
  for_each_context([](const ParallelContext& context) {
    if (!context.is_initialized(ParallelMode::pipe)) {
      EXPECT_TRUE(context.is_pipeline_first_stage());
      EXPECT_TRUE(context.is_pipeline_last_stage());
      return;
    }
    EXPECT_EQ(context.is_pipeline_first_stage(), context.is_first_rank(ParallelMode::pipe));
    EXPECT_EQ(context.is_pipeline_last_stage(), context.is_last_rank(ParallelMode::pipe));
  });
}

TEST(ParallelContextVirtualPipeline, OnlyTheFirstAndLastChunksAreEndStagesUnlessIgnored) {
  ParallelConfig config;
  config.pipeline = test::world_size();
  ParallelContext context(config, MPI_COMM_WORLD);
  const bool first = test::world_rank() == 0;
  const bool last = test::world_rank() == test::world_size() - 1;
  EXPECT_FALSE(context.virtual_pipeline_parallel_size());

  context.set_virtual_pipeline_parallel_size(3);
  context.set_virtual_pipeline_parallel_rank(0);
  EXPECT_EQ(context.is_pipeline_first_stage(), first);
  EXPECT_FALSE(context.is_pipeline_last_stage());
  EXPECT_EQ(context.is_pipeline_last_stage(/*ignore_virtual=*/true), last);

  context.set_virtual_pipeline_parallel_rank(1);
  EXPECT_FALSE(context.is_pipeline_first_stage());
  EXPECT_FALSE(context.is_pipeline_last_stage());
  EXPECT_EQ(context.is_pipeline_first_stage(true), first);

  context.set_virtual_pipeline_parallel_rank(2);
  EXPECT_FALSE(context.is_pipeline_first_stage());
  EXPECT_EQ(context.is_pipeline_last_stage(), last);

  context.set_virtual_pipeline_parallel_size(std::nullopt);
  EXPECT_EQ(context.is_pipeline_first_stage(), first);
  EXPECT_EQ(context.is_pipeline_last_stage(), last);

  EXPECT_EQ(test::message_of<ConfigError>([&] { context.set_virtual_pipeline_parallel_size(0); }),
            "virtual pipeline size 0 is invalid: it must be a positive integer");
  EXPECT_EQ(test::message_of<ConfigError>([&] { context.set_virtual_pipeline_parallel_rank(-1); }),
            "virtual pipeline rank -1 is invalid: it must be a non-negative integer");
}

TEST(ParallelContextModes, AskingForAModeNotCreatedNamesItAndTheModesThatExist) {
  const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD);
  const auto not_created = [](const std::string& kind) {
    return fmt::format(
        "group kind '{}' is not created for W={} pipeline=1 tensor=1 mode=none; the kinds are: global, "
        "data, model, tensor",
        kind, test::world_size());
  };
  EXPECT_EQ(test::message_of<StateError>([&] { (void)context.get_group(ParallelMode::tensor_2d_row); }),
            not_created("2d_row"));
  EXPECT_EQ(test::message_of<StateError>([&] { (void)context.local_rank("tensr"); }),
            not_created("tensr") + " (did you mean tensor?)");
  EXPECT_EQ(test::message_of<StateError>([&] { (void)context.seed(ParallelMode::tensor_1d); }), not_created("1d"));
  EXPECT_EQ(test::message_of<StateError>([&] { (void)context.next_global_rank(ParallelMode::sequence); }),
            not_created("sequence"));
  EXPECT_FALSE(context.is_initialized(ParallelMode::pipe));
}

TEST(ParallelContextModes, TheDeprecatedGroupsAnswersAsKindNames) {
  ParallelConfig config;
  config.tensor_size = test::world_size();
  config.tensor_mode = TensorMode::tensor_1d;
  const ParallelContext context(config, MPI_COMM_WORLD);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const std::vector<std::string> old_names = context.groups();
#pragma GCC diagnostic pop
  EXPECT_EQ(old_names, context.kind_names());
  EXPECT_FALSE(old_names.empty());
}

TEST(ParallelContextModes, NamesAndModesAskTheSameGroup) {
  ParallelConfig config;
  config.tensor_size = test::world_size();
  config.tensor_mode = TensorMode::tensor_1d;
  const ParallelContext context(config, MPI_COMM_WORLD);
  EXPECT_EQ(context.kind_names(), (std::vector<std::string>{"global", "data", "model", "tensor", "1d"}));
  for (ParallelMode mode : context.modes()) {
    const std::string_view name = mode_name(mode);
    EXPECT_EQ(context.get_group(name), context.get_group(mode));
    EXPECT_EQ(context.local_rank(name), context.local_rank(mode));
    EXPECT_EQ(context.world_size(name), context.world_size(mode));
    EXPECT_EQ(context.ranks_in_group(name), context.ranks_in_group(mode));
    EXPECT_EQ(context.next_rank(name), context.next_rank(mode));
    EXPECT_EQ(context.seed(name), context.seed(mode));
    EXPECT_TRUE(context.is_member(name));
  }
}

TEST(ParallelContextNeighbours, NextAndPrevGiveTheGlobalAndTheLocalRankInTheCommunicator) {
  ParallelConfig config;
  config.tensor_size = test::world_size();
  config.tensor_mode = TensorMode::tensor_1d;
  const ParallelContext context(config, MPI_COMM_WORLD);
  const std::int64_t n = test::world_size();
  const std::int64_t me = test::world_rank();
  EXPECT_EQ(context.next_rank("1d"), (Neighbour{(me + 1) % n, (me + 1) % n}));
  EXPECT_EQ(context.prev_rank("1d"), (Neighbour{(me + n - 1) % n, (me + n - 1) % n}));
  // The local rank is the one to name in the communicator: a message sent there arrives
  // from the previous neighbour.
  const MPI_Comm comm = context.get_group("1d").mpi();
  const int sent = static_cast<int>(me);
  int received = -1;
  MPI_Sendrecv(&sent, 1, MPI_INT, static_cast<int>(context.next_rank("1d").local_rank), 0, &received, 1, MPI_INT,
               static_cast<int>(context.prev_rank("1d").local_rank), 0, comm, MPI_STATUS_IGNORE);
  EXPECT_EQ(received, context.prev_rank("1d").global_rank);
}

TEST(ParallelContextPipeline, WithoutAPipelineThePipeQueriesAnswerAsMegatronDoes) {
  // Pipeline size 1: no `pipe` communicator, but the queries answer for this rank alone.
  const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD);
  EXPECT_FALSE(context.is_initialized(ParallelMode::pipe));
  EXPECT_EQ(context.local_rank(ParallelMode::pipe), 0);
  EXPECT_EQ(context.world_size(ParallelMode::pipe), 1);
  EXPECT_TRUE(context.is_first_rank(ParallelMode::pipe));
  EXPECT_TRUE(context.is_last_rank(ParallelMode::pipe));
  EXPECT_EQ(context.ranks_in_group(ParallelMode::pipe), std::vector<std::int64_t>{test::world_rank()});
  EXPECT_EQ(context.next_rank(ParallelMode::pipe), (Neighbour{test::world_rank(), 0}));
  EXPECT_TRUE(context.is_pipeline_first_stage());
  EXPECT_TRUE(context.is_pipeline_last_stage());
  EXPECT_EQ(test::message_of<StateError>([&] { (void)context.get_group(ParallelMode::pipe); }),
            "there is no communicator of group pipe: the pipeline size is 1, so none was created "
            "(its queries answer for this rank alone)");
}

TEST(ParallelContextVirtualPipeline, ARankBeyondTheSizeIsAConfigErrorNamingBoth) {
  ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD);
  context.set_virtual_pipeline_parallel_size(2);
  context.set_virtual_pipeline_parallel_rank(1);
  EXPECT_EQ(test::message_of<ConfigError>([&] { context.set_virtual_pipeline_parallel_rank(2); }),
            "virtual pipeline rank 2 is invalid: the virtual pipeline size is 2, so the rank must "
            "be below it");
  EXPECT_EQ(context.virtual_pipeline_parallel_rank(), 1);
  // A smaller size than the rank held starts the chunks again.
  context.set_virtual_pipeline_parallel_size(1);
  EXPECT_EQ(context.virtual_pipeline_parallel_rank(), 0);
}

TEST(ParallelContextNode, EveryRankOfThisMachineSharesTheNodeAndDevicesFollowTheRank) {
  const int rank = test::world_rank();
  const int size = test::world_size();
  {
    const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD);
    EXPECT_EQ(context.processes_on_node(), size);
    EXPECT_EQ(context.local_rank_on_node(), rank);
    EXPECT_EQ(context.device(), rank % size);
  }
  {
    ContextOptions options;
    options.devices_per_node = 2;
    const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD, options);
    EXPECT_EQ(context.device(), rank % 2);
  }
  {
    // The device may differ between ranks: it is not part of the agreement.
    ContextOptions options;
    options.device = 10 + rank;
    const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD, options);
    EXPECT_EQ(context.device(), 10 + rank);
  }
}

TEST(ParallelContextWorld, AGivenWorldSizeMustBeTheCommunicatorsOnEveryRank) {
  ParallelConfig config;
  config.world_size = test::world_size() + 1;
  EXPECT_EQ(test::message_of<ConfigError>([&] { const ParallelContext context(config, MPI_COMM_WORLD); }),
            fmt::format("world size {} was given, but the communicator has {} ranks", test::world_size() + 1,
                        test::world_size()));
}

TEST(ParallelContextWorld, AnInvalidPlanIsTheSameConfigErrorOnEveryRank) {
  ParallelConfig config;
  config.tensor_size = test::world_size() + 1;
  std::string message;
  try {
    const ParallelContext context(config, MPI_COMM_WORLD);
  } catch (const ConfigError& error) {
    message = error.what();
  }
  EXPECT_EQ(message, fmt::format("world size {0} is not divisible by pipeline size 1 * tensor size {1} = {1}: the "
                                 "data-parallel size W / (pipeline * tensor) must be a whole number",
                                 test::world_size(), test::world_size() + 1));
  EXPECT_TRUE(test::same_everywhere(MPI_COMM_WORLD, static_cast<std::int64_t>(message.size())));
}

TEST(ParallelContextWorld, ABorrowedSubCommunicatorIsTheWorldOfItsOwnContext) {
  // Split the world into halves (or one half for odd sizes); each builds its own plan.
  const int rank = test::world_rank();
  const int half = (test::world_size() + 1) / 2;
  MPI_Comm part = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank < half ? 0 : 1, rank, &part);
  int part_size = 0;
  MPI_Comm_size(part, &part_size);
  {
    ParallelConfig config;
    config.tensor_size = part_size;
    config.tensor_mode = TensorMode::tensor_1d;
    const ParallelContext context(config, part);
    EXPECT_EQ(context.world_size(ParallelMode::tensor_1d), part_size);
    EXPECT_EQ(context.global_rank(), rank < half ? rank : rank - half);
  }
  int still_usable = 0;
  EXPECT_EQ(MPI_Comm_size(part, &still_usable), MPI_SUCCESS);
  EXPECT_EQ(still_usable, part_size);
  MPI_Comm_free(&part);
}

TEST(ParallelContextWorld, AWorldOfOneRankHasTheFourAlwaysModes) {
  // MPI_COMM_SELF is a world of one on every rank, whatever the job's size.
  const ParallelContext context(ParallelConfig{}, MPI_COMM_SELF);
  EXPECT_EQ(context.modes(), (std::vector<ParallelMode>{ParallelMode::global, ParallelMode::data, ParallelMode::model,
                                                        ParallelMode::tensor}));
  for (ParallelMode mode : context.modes()) {
    EXPECT_EQ(context.local_rank(mode), 0);
    EXPECT_EQ(context.world_size(mode), 1);
    EXPECT_EQ(context.next_global_rank(mode), 0);
    EXPECT_TRUE(context.is_first_rank(mode));
    EXPECT_TRUE(context.is_last_rank(mode));
  }
  EXPECT_TRUE(context.is_pipeline_first_stage());
  EXPECT_TRUE(context.is_pipeline_last_stage());
  EXPECT_EQ(context.processes_on_node(), 1);
}

}  // namespace
}  // namespace pgroups
