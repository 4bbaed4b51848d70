// A context's creation ends within its timeout: a rank that arrives too late makes every
// rank throw TimeoutError naming the step, nothing stays allocated and the world stays
// usable; zero means no timeout; and the watchdog never fires for a context that was
// built (if it did, this process would end with status 8 and the test with it).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/mpi/deadline.hpp"

namespace pgroups {
namespace {

using namespace std::chrono_literals;
using mpi::Communicator;

bool is_last_rank() { return test::world_rank() == test::world_size() - 1; }

// The configuration with a pipeline and a tensor group when the world allows it.
ParallelConfig two_level_config() {
  ParallelConfig config;
  config.world_size = test::world_size();
  if (test::world_size() % 4 == 0) {
    config.pipeline = 2;
    config.tensor_size = 2;
    config.tensor_mode = TensorMode::tensor_1d;
  }
  return config;
}

// Without PGROUPS_TIMEOUT from the launching shell, and restored afterwards.
class ContextTimeout : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* value = std::getenv(kTimeoutEnvironmentVariable)) saved_ = value;
    ::unsetenv(kTimeoutEnvironmentVariable);
  }
  void TearDown() override {
    if (saved_) ::setenv(kTimeoutEnvironmentVariable, saved_->c_str(), 1);
    // Every rank leaves the test together, whatever it waited for.
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // Builds a context that must time out on every rank; returns this rank's message and
  // checks that nothing stayed allocated.
  static std::string timeout_message(const ParallelConfig& config, const ContextOptions& options) {
    const std::int64_t before = Communicator::live_count();
    std::string message = "no exception";
    try {
      const ParallelContext context(config, MPI_COMM_WORLD, options);
    } catch (const TimeoutError& error) {
      message = error.what();
      EXPECT_EQ(error.exit_code(), ExitCode::timeout);
    }
    EXPECT_EQ(Communicator::live_count(), before);
    return message;
  }

 private:
  std::optional<std::string> saved_;
};

TEST_F(ContextTimeout, OptionsReportTheTimeoutInEffect) {
  EXPECT_EQ(ParallelContext(ParallelConfig{}, MPI_COMM_WORLD).options().timeout, kDefaultTimeout);
  ContextOptions explicit_timeout;
  explicit_timeout.timeout = 2s;
  EXPECT_EQ(ParallelContext(ParallelConfig{}, MPI_COMM_WORLD, explicit_timeout).options().timeout, 2s);
  ::setenv(kTimeoutEnvironmentVariable, "7", 1);
  EXPECT_EQ(ParallelContext(ParallelConfig{}, MPI_COMM_WORLD).options().timeout, 7s);
  EXPECT_EQ(ParallelContext(ParallelConfig{}, MPI_COMM_WORLD, explicit_timeout).options().timeout, 2s);
}

TEST_F(ContextTimeout, ARankLateForTheAgreementMakesEveryRankThrowNamingTheStep) {
  if (test::world_size() < 2) GTEST_SKIP() << "needs two ranks";
  ContextOptions options;
  options.timeout = 1s;
  // The last rank arrives after the deadline: the others give up waiting for it, and it
  // finds its own deadline passed.
  if (is_last_rank()) {
    options.before_step = [](std::string_view step) {
      if (step == "agreement") std::this_thread::sleep_for(2s);
    };
  }
  const ParallelConfig config = two_level_config();
  EXPECT_EQ(timeout_message(config, options), mpi::timeout_message(1s, {"agreement", "the configuration agreement"},
                                                                   test::world_rank(), test::world_size()));
  // The abandoned reduction was on the context's own communicator: the world is intact.
  const ParallelContext context(config, MPI_COMM_WORLD);
  EXPECT_TRUE(context.is_initialized(ParallelMode::tensor));
}

TEST_F(ContextTimeout, ADeadlinePassedBeforeABlockingStepThrowsOnEveryRankAndFreesEverything) {
  const ParallelConfig config = two_level_config();
  const ParallelMode first_mode = Layout(config).modes()[1];
  ContextOptions options;
  options.timeout = 1s;
  options.before_step = [first_mode](std::string_view step) {
    if (step == mode_name(first_mode)) std::this_thread::sleep_for(1500ms);
  };
  const int index_before = test::fortran_index_of_a_new_communicator();
  const std::string description = fmt::format("the creation of mode {}", mode_name(first_mode));
  EXPECT_EQ(timeout_message(config, options),
            mpi::timeout_message(1s, {mode_name(first_mode), description}, test::world_rank(), test::world_size()));
  EXPECT_LE(test::fortran_index_of_a_new_communicator(), index_before);
}

TEST_F(ContextTimeout, ZeroMeansNoTimeout) {
  ContextOptions options;
  options.timeout = 0ms;
  if (is_last_rank()) {
    options.before_step = [](std::string_view step) {
      if (step == "agreement") std::this_thread::sleep_for(300ms);
    };
  }
  const ParallelContext context(two_level_config(), MPI_COMM_WORLD, options);
  EXPECT_EQ(context.options().timeout, 0ms);
  EXPECT_TRUE(context.is_initialized(ParallelMode::global));
}

// A watchdog that fired would end this process (status 8) and the job with it; the
// checks below also show that every rank is alive and its contexts whole past each
// deadline, and that destruction freed every communicator.
TEST_F(ContextTimeout, TheWatchdogNeverFiresAfterASuccessfulCreationOrDestruction) {
  const std::int64_t before = Communicator::live_count();
  const ParallelConfig config = two_level_config();
  const Layout layout(config);
  ContextOptions options;
  // Long enough for creation on a loaded machine; the waits below outlast it.
  options.timeout = 1s;
  {
    ParallelContext context(config, MPI_COMM_WORLD, options);
    std::this_thread::sleep_for(1500ms);  // past the creation's deadline
    for (ParallelMode mode : layout.modes()) {
      EXPECT_TRUE(context.is_initialized(mode)) << mode_name(mode);
      EXPECT_EQ(context.world_size(mode), layout.group_size(mode)) << mode_name(mode);
    }
    context.destroy();
    for (ParallelMode mode : layout.modes()) EXPECT_FALSE(context.is_initialized(mode)) << mode_name(mode);
    EXPECT_EQ(Communicator::live_count(), before);
    std::this_thread::sleep_for(1500ms);  // past the destruction's deadline
    const ParallelContext freed_by_destructor(config, MPI_COMM_WORLD, options);
    EXPECT_TRUE(freed_by_destructor.is_initialized(ParallelMode::tensor));
    EXPECT_GT(Communicator::live_count(), before);
  }
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(Communicator::live_count(), before);
  // Every rank is still here to count itself.
  int alive = 1;
  int ranks = 0;
  ASSERT_EQ(MPI_Allreduce(&alive, &ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(ranks, test::world_size());
}

}  // namespace
}  // namespace pgroups
