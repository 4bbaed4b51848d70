// The watchdog that ends a rank blocked in MPI past its deadline: it fires once for a
// step that outlives the deadline, never for one that ended in time, and never after it
// is destroyed. Its action is replaced by a recorder, so nothing here ends the process.

#include "pgroups/mpi/watchdog.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pgroups/layout/error.hpp"
#include "support/error_message.hpp"

namespace pgroups::mpi {
namespace {

using namespace std::chrono_literals;

constexpr mpi::Step kStep{"tensor", "the creation of mode tensor"};

// What the watchdog reported, from its own thread.
class Recorder {
 public:
  Watchdog::Action action() {
    return [this](const std::string& message) {
      const std::lock_guard lock(mutex_);
      messages_.push_back(message);
    };
  }
  std::vector<std::string> messages() const {
    const std::lock_guard lock(mutex_);
    return messages_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> messages_;
};

TEST(Watchdog, FiresOnceWithTheTimeoutMessageWhenAStepOutlivesTheDeadline) {
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(300ms), 2, 4, recorder.action());
  {
    const auto guard = watchdog.enter(kStep);
    std::this_thread::sleep_for(800ms);  // the "blocked" step
  }
  EXPECT_EQ(watchdog.fired(), 1);
  ASSERT_EQ(recorder.messages().size(), 1U);
  EXPECT_EQ(recorder.messages().front(),
            "timed out after 0.3 s waiting for all ranks at the creation of mode tensor (step 'tensor', rank 2 of 4)");
}

TEST(Watchdog, NeverFiresForStepsThatEndedBeforeTheDeadline) {
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(500ms), 0, 2, recorder.action());
  for (int step = 0; step < 3; ++step) {
    const auto guard = watchdog.enter(kStep);
  }
  std::this_thread::sleep_for(700ms);  // past the deadline, but no step is running
  EXPECT_EQ(watchdog.fired(), 0);
  EXPECT_TRUE(recorder.messages().empty());
}

TEST(Watchdog, DestroyingItWhileArmedJoinsAtOnceAndNothingFiresLater) {
  Recorder recorder;
  const auto start = std::chrono::steady_clock::now();
  {
    Watchdog watchdog(mpi::Deadline(200ms), 0, 2, recorder.action());
    const auto guard = watchdog.enter(kStep);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 150ms) << "the destructor waited for the deadline";
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(recorder.messages().empty());
}

TEST(Watchdog, EnteringAStepAfterTheDeadlineThrowsTimeoutErrorInsteadOfBlocking) {
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(20ms), 1, 3, recorder.action());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(test::message_of<TimeoutError>([&] { const auto guard = watchdog.enter(kStep); }),
            "timed out after 0.02 s waiting for all ranks at the creation of mode tensor (step 'tensor', rank 1 "
            "of 3)");
  EXPECT_NO_THROW({ const auto guard = watchdog.enter_if_possible(kStep); });
  EXPECT_EQ(watchdog.fired(), 0);
}

TEST(Watchdog, AnUnlimitedDeadlineNeverFires) {
  Recorder recorder;
  Watchdog watchdog(mpi::Deadline(std::chrono::milliseconds(0)), 0, 1, recorder.action());
  {
    const auto guard = watchdog.enter(kStep);
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(watchdog.fired(), 0);
}

}  // namespace
}  // namespace pgroups::mpi
