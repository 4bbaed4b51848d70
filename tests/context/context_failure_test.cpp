// Creation either completes or leaves nothing behind: whichever step fails, on every
// rank, the exception leaves the constructor with every communicator created so far
// freed (wrappers and MPI handles alike), and the next context builds normally. The
// before_step hook, which injects the failures, sees every step once, in order.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/mpi/communicator.hpp"

namespace pgroups {
namespace {

using mpi::Communicator;

std::vector<std::string> expected_steps(const ParallelConfig& config) {
  std::vector<std::string> steps = {"duplicate", "agreement", "node"};
  const Layout layout(config);
  for (ParallelMode mode : layout.modes()) {
    if (mode != ParallelMode::global) steps.emplace_back(mode_name(mode));
  }
  return steps;
}

TEST(CreationSteps, TheHookSeesEveryStepOnceInCreationOrder) {
  const ParallelConfig config = test::richest_config();
  std::vector<std::string> seen;
  ContextOptions options;
  options.before_step = [&seen](std::string_view step) { seen.emplace_back(step); };
  const ParallelContext context(config, MPI_COMM_WORLD, options);
  EXPECT_EQ(seen, expected_steps(config)) << describe(config);
}

TEST(CreationFailure, AFailureAtAnyStepFreesEverythingCreatedSoFar) {
  const ParallelConfig config = test::richest_config();
  const std::int64_t live_before = Communicator::live_count();
  const int index_before = test::fortran_index_of_a_new_communicator();
  for (const std::string& failing : expected_steps(config)) {
    SCOPED_TRACE(failing);
    ContextOptions options;
    options.before_step = [&failing](std::string_view step) {
      if (step == failing) throw std::runtime_error(fmt::format("injected at {}", step));
    };
    std::string message = "no exception";
    try {
      const ParallelContext context(config, MPI_COMM_WORLD, options);
    } catch (const std::runtime_error& error) {
      message = error.what();
    }
    EXPECT_EQ(message, "injected at " + failing);
    EXPECT_EQ(Communicator::live_count(), live_before);
    EXPECT_LE(test::fortran_index_of_a_new_communicator(), index_before) << "an MPI handle was not freed";
  }
  const ParallelContext context(config, MPI_COMM_WORLD);
  EXPECT_EQ(context.modes().size(), Layout(config).modes().size());
}

}  // namespace
}  // namespace pgroups
