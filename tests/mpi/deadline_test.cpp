// Waiting for the other ranks until a deadline: the *_until collectives return what the
// blocking ones would when every rank arrives, and throw TimeoutError naming the step
// and the rank when one does not.

#include "pgroups/mpi/deadline.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "support/error_message.hpp"
#include "support/manual_clock.hpp"

namespace pgroups::mpi {
namespace {

using namespace std::chrono_literals;

constexpr Step kStep{"agreement", "the configuration agreement"};

TEST(DeadlineText, SecondsAreShownWithoutTrailingZeros) {
  EXPECT_EQ(seconds_text(5s), "5 s");
  EXPECT_EQ(seconds_text(300s), "300 s");
  EXPECT_EQ(seconds_text(250ms), "0.25 s");
  EXPECT_EQ(seconds_text(1500ms), "1.5 s");
  EXPECT_EQ(seconds_text(1ms), "0.001 s");
}

TEST(DeadlineText, TheMessageNamesTimeoutStepAndRank) {
  EXPECT_EQ(timeout_message(5s, kStep, 0, 4),
            "timed out after 5 s waiting for all ranks at the configuration agreement (step 'agreement', rank 0 of 4)");
}

TEST(Deadline, ZeroIsUnlimitedAndNeverExpires) {
  const Deadline unlimited(0ms);
  EXPECT_FALSE(unlimited.is_limited());
  EXPECT_FALSE(unlimited.expired());
  EXPECT_FALSE(Deadline().is_limited());
  test::ManualClock clock;
  const Deadline soon(1ms, clock);
  EXPECT_TRUE(soon.is_limited());
  EXPECT_FALSE(soon.expired());
  clock.advance(999us);
  EXPECT_FALSE(soon.expired());
  clock.advance(1us);
  EXPECT_TRUE(soon.expired());
  EXPECT_EQ(&soon.clock(), &clock);
  EXPECT_EQ(&Deadline(1ms).clock(), &steady_wait_clock()) << "production deadlines are on the steady clock";
}

TEST(Deadline, TimeoutsAtAndFarBeyondTheCapNeverWrapIntoThePast) {
  const Deadline at_cap(kLargestTimeout);
  EXPECT_TRUE(at_cap.is_limited());
  EXPECT_FALSE(at_cap.expired());
  EXPECT_GT(at_cap.at(), Deadline::Clock::now() + std::chrono::hours(24 * 365 * 31));
  const Deadline huge(std::chrono::milliseconds::max());
  EXPECT_FALSE(huge.expired()) << "a sum that overflowed would lie in the past";
  EXPECT_EQ(huge.at(), Deadline::Clock::time_point::max());
}

TEST(Deadline, CollectivesOfRanksThatAllArriveCompleteAsTheirBlockingForms) {
  const Communicator world = Communicator::borrow(MPI_COMM_WORLD);
  const std::int64_t before = Communicator::live_count();
  for (const Deadline& deadline : {Deadline(), Deadline(30s)}) {
    Communicator copy = dup_until(world, deadline, {"duplicate", "the duplication"});
    EXPECT_EQ(Communicator::live_count(), before + 1);
    EXPECT_EQ(copy.size(), test::world_size());
    EXPECT_EQ(copy.rank(), test::world_rank());
    barrier_until(copy, deadline, {"start", "the start"});
    const std::vector<std::int64_t> values = {test::world_rank(), -test::world_rank()};
    EXPECT_EQ(min_until(copy, values, deadline, kStep), (std::vector<std::int64_t>{0, 1 - test::world_size()}));
  }
  EXPECT_EQ(Communicator::live_count(), before);
}

TEST(Deadline, AnExpiredDeadlineThrowsBeforeStartingTheCollective) {
  // Every rank throws, and none starts the reduction, so the world stays usable.
  const Communicator world = Communicator::borrow(MPI_COMM_WORLD);
  test::ManualClock clock;
  const Deadline deadline(1ms, clock);
  clock.advance(5ms);
  try {
    static_cast<void>(min_until(world, std::vector<std::int64_t>{1}, deadline, kStep));
    FAIL() << "no exception";
  } catch (const TimeoutError& error) {
    EXPECT_EQ(error.what(), timeout_message(1ms, kStep, test::world_rank(), test::world_size()));
    EXPECT_EQ(error.exit_code(), ExitCode::timeout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Deadline, ARankThatNeverArrivesMakesTheOthersTimeOutNamingTheStep) {
  if (test::world_size() < 2) GTEST_SKIP() << "needs two ranks";
  // On a communicator of its own, which is freed afterwards: the abandoned reduction
  // stays pending on the ranks that started it.
  Communicator private_comm = Communicator::borrow(MPI_COMM_WORLD).dup();
  const bool absent = test::world_rank() == test::world_size() - 1;
  if (!absent) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(test::message_of<TimeoutError>([&] {
                static_cast<void>(min_until(private_comm, std::vector<std::int64_t>{7}, Deadline(200ms), kStep));
              }),
              timeout_message(200ms, kStep, test::world_rank(), test::world_size()));
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_GE(waited, 200ms);
    EXPECT_LT(waited, 2s);
  }
  private_comm.free();
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace pgroups::mpi
