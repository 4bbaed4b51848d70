// The watchdog that ends a rank blocked in MPI past its deadline: it fires once for a
// step that outlives the deadline, never for one that ended in time, and never after it
// is destroyed. Its action is replaced by a recorder, so nothing here ends the process,
// and its deadline is on a ManualClock that the tests advance: no test sleeps.

#include "pgroups/mpi/watchdog.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "support/error_message.hpp"
#include "support/manual_clock.hpp"

namespace pgroups::mpi {
namespace {

using namespace std::chrono_literals;

constexpr mpi::Step kStep{"tensor", "the creation of mode tensor"};

// What the watchdog reported, from its own thread.
class Recorder {
 public:
  Watchdog::Action action() {
    return [this](const std::string& message) {
      {
        const std::lock_guard lock(mutex_);
        messages_.push_back(message);
      }
      arrived_.notify_all();
    };
  }
  // Waits for the watchdog's thread to report `count` messages; the bound is only there
  // so that a watchdog that never fires fails the test instead of hanging it.
  bool wait_for(std::size_t count) { return wait_for_at_most(count, std::chrono::seconds(30)); }
  bool wait_for_at_most(std::size_t count, std::chrono::milliseconds bound) {
    std::unique_lock lock(mutex_);
    return arrived_.wait_for(lock, bound, [&] { return messages_.size() >= count; });
  }
  std::vector<std::string> messages() const {
    const std::lock_guard lock(mutex_);
    return messages_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::string> messages_;
};

TEST(Watchdog, FiresOnceWithTheTimeoutMessageWhenAStepOutlivesTheDeadline) {
  test::ManualClock clock;
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(300ms, clock), 2, 4, recorder.action());
  {
    const auto guard = watchdog.enter(kStep);  // the "blocked" step
    clock.advance(299ms);
    clock.advance(1ms);
    ASSERT_TRUE(recorder.wait_for(1)) << "the watchdog did not fire at the deadline";
  }
  EXPECT_EQ(watchdog.fired(), 1);
  ASSERT_EQ(recorder.messages().size(), 1U);
  EXPECT_EQ(recorder.messages().front(),
            "timed out after 0.3 s waiting for all ranks at the creation of mode tensor (step 'tensor', rank 2 of 4)");
}

TEST(Watchdog, DoesNotFireBeforeTheDeadline) {
  test::ManualClock clock;
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(300ms, clock), 0, 2, recorder.action());
  const auto guard = watchdog.enter(kStep);
  clock.advance(299ms);
  // The watchdog's thread re-reads the manual clock every millisecond; if it took 299 ms
  // for the deadline, it would have fired within this wait.
  EXPECT_FALSE(recorder.wait_for_at_most(1, 50ms));
  EXPECT_EQ(watchdog.fired(), 0);
}

TEST(Watchdog, NeverFiresForStepsThatEndedBeforeTheDeadline) {
  test::ManualClock clock;
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(500ms, clock), 0, 2, recorder.action());
  for (int step = 0; step < 3; ++step) {
    const auto guard = watchdog.enter(kStep);
    clock.advance(100ms);
  }
  clock.advance(400ms);  // past the deadline, but no step is running
  EXPECT_FALSE(recorder.wait_for_at_most(1, 50ms));
  EXPECT_EQ(watchdog.fired(), 0);
}

TEST(Watchdog, DestroyingItWhileArmedJoinsAtOnceAndNothingFiresLater) {
  test::ManualClock clock;
  Recorder recorder;
  const auto start = std::chrono::steady_clock::now();
  {
    Watchdog watchdog(mpi::Deadline(200ms, clock), 0, 2, recorder.action());
    const auto guard = watchdog.enter(kStep);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "the destructor waited for the deadline";
  clock.advance(300ms);  // the thread is joined: nothing is left to fire
  EXPECT_TRUE(recorder.messages().empty());
}

TEST(Watchdog, EnteringAStepAfterTheDeadlineThrowsTimeoutErrorInsteadOfBlocking) {
  test::ManualClock clock;
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(20ms, clock), 1, 3, recorder.action());
  clock.advance(20ms);
  EXPECT_EQ(test::message_of<TimeoutError>([&] { const auto guard = watchdog.enter(kStep); }),
            "timed out after 0.02 s waiting for all ranks at the creation of mode tensor (step 'tensor', rank 1 "
            "of 3)");
  EXPECT_NO_THROW({ const auto guard = watchdog.enter_if_possible(kStep); });
  EXPECT_EQ(watchdog.fired(), 0);
}

TEST(Watchdog, AnUnlimitedDeadlineNeverFires) {
  test::ManualClock clock;
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(std::chrono::milliseconds(0), clock), 0, 1, recorder.action());
  {
    const auto guard = watchdog.enter(kStep);
    clock.advance(std::chrono::hours(24 * 365));
  }
  EXPECT_EQ(watchdog.fired(), 0);
  EXPECT_TRUE(recorder.messages().empty());
}

TEST(Watchdog, OnTheSteadyClockByDefaultItFiresInRealTime) {
  // The production clock, once: a short real deadline, waited for by event.
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(20ms), 0, 1, recorder.action());
  const auto guard = watchdog.enter(kStep);
  ASSERT_TRUE(recorder.wait_for(1));
  EXPECT_EQ(watchdog.fired(), 1);
}

}  // namespace
}  // namespace pgroups::mpi
