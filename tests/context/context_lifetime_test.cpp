// A context owns its communicators: destroy() frees them all, a second destroy() is
// harmless, a failure part-way frees what was built, and a hundred build/destroy
// cycles leave no handle behind.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <utility>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/mpi/communicator.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using mpi::Communicator;

TEST(ParallelContextLifetime, DestroyFreesEveryCommunicatorAndASecondDestroyIsHarmless) {
  const std::int64_t before = Communicator::live_count();
  // Sharing off: one communicator per mode (context_sharing_test counts the shared ones).
  ContextOptions separate;
  separate.share_communicators = false;
  ParallelContext context(test::richest_config(), MPI_COMM_WORLD, separate);
  EXPECT_EQ(Communicator::live_count(), before + static_cast<std::int64_t>(context.modes().size()));
  context.destroy();
  EXPECT_EQ(Communicator::live_count(), before);
  EXPECT_TRUE(context.modes().empty());
  for (ParallelMode mode : kAllParallelModes) EXPECT_FALSE(context.is_initialized(mode));
  EXPECT_NO_THROW(context.destroy());
  EXPECT_EQ(test::message_of<StateError>([&] { (void)context.get_group(ParallelMode::global); }),
            "group global is not initialized: the context was destroyed (or moved from)");
  EXPECT_EQ(test::message_of<StateError>([&] { (void)context.is_pipeline_first_stage(); }),
            "the context was destroyed (or moved from); it has no pipeline stage");
  // What does not depend on a communicator stays available.
  EXPECT_EQ(context.global_rank(), test::world_rank());
  EXPECT_EQ(context.layout().world_size(), test::world_size());
}

TEST(ParallelContextLifetime, AHundredBuildAndDestroyCyclesLeakNothing) {
  const ParallelConfig config = test::richest_config();
  for (CreationStrategy strategy : kAllCreationStrategies) {
    SCOPED_TRACE(std::string(strategy_name(strategy)));
    ContextOptions options;
    options.strategy = strategy;
    const std::int64_t before = Communicator::live_count();
    const int index_before = test::fortran_index_of_a_new_communicator();
    for (int cycle = 0; cycle < 100; ++cycle) {
      ParallelContext context(config, MPI_COMM_WORLD, options);
      ASSERT_TRUE(context.is_initialized(ParallelMode::global));
      context.destroy();
      ASSERT_EQ(Communicator::live_count(), before) << "cycle " << cycle;
    }
    // The destructor frees too.
    for (int cycle = 0; cycle < 3; ++cycle) const ParallelContext context(config, MPI_COMM_WORLD, options);
    EXPECT_EQ(Communicator::live_count(), before);
    EXPECT_LE(test::fortran_index_of_a_new_communicator(), index_before + 2);
  }
}

TEST(ParallelContextLifetime, AFailurePartWayFreesWhatWasBuiltAndLeavesNothingInitialized) {
  const std::int64_t before = Communicator::live_count();
  ParallelConfig config = test::richest_config();
  // One hook injects every failure (ContextOptions::before_step): here a backend
  // failure before the node query (only `global` exists) and before the tensor kind.
  for (const std::string fail_at : {"node", "tensor"}) {
    ContextOptions options;
    options.before_step = [&fail_at](std::string_view step) {
      if (step == fail_at) throw BackendError(fmt::format("injected failure before step {}", step));
    };
    std::string message;
    try {
      const ParallelContext context(config, MPI_COMM_WORLD, options);
    } catch (const BackendError& error) {
      message = error.what();
    }
    EXPECT_EQ(message, fmt::format("injected failure before step {}", fail_at));
    EXPECT_EQ(Communicator::live_count(), before);
  }
  // And the next context builds normally.
  const ParallelContext context(config, MPI_COMM_WORLD);
  EXPECT_TRUE(context.is_initialized(ParallelMode::tensor));
}

TEST(ParallelContextLifetime, MovingHandsOverTheCommunicators) {
  const std::int64_t before = Communicator::live_count();
  ParallelContext first(test::richest_config(), MPI_COMM_WORLD);
  const std::size_t modes = first.modes().size();
  // What the context holds (kinds may share one communicator: context_sharing_test).
  const std::int64_t held = Communicator::live_count() - before;
  EXPECT_GT(held, 0);
  const GroupHandle tensor = first.get_group(ParallelMode::tensor);
  ParallelContext second = std::move(first);
  EXPECT_TRUE(first.modes().empty());  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
  EXPECT_EQ(second.modes().size(), modes);
  EXPECT_EQ(second.get_group(ParallelMode::tensor), tensor);
  EXPECT_EQ(Communicator::live_count(), before + held);
  ParallelContext third(ParallelConfig{}, MPI_COMM_WORLD);
  third = std::move(second);
  EXPECT_EQ(Communicator::live_count(), before + held);
  third.destroy();
  EXPECT_EQ(Communicator::live_count(), before);
}

}  // namespace
}  // namespace pgroups
