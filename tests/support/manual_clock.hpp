#pragma once
// A WaitClock that moves only when the test advances it: "the deadline has passed" is a
// line of the test, not a sleep of a guessed length on a loaded machine.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "pgroups/mpi/wait_clock.hpp"

namespace pgroups::test {

class ManualClock final : public mpi::WaitClock {
 public:
  [[nodiscard]] time_point now() const noexcept override {
    return time_point(std::chrono::steady_clock::duration(ticks_.load()));
  }

  void advance(std::chrono::steady_clock::duration by) noexcept { ticks_.fetch_add(by.count()); }

  // A waiter re-checks the time every millisecond of real time: advance() notifies no
  // condition variable (it holds none of the waiters' mutexes, so a notify could be
  // lost between their check and their wait).
  void wait_until(std::condition_variable& wake, std::unique_lock<std::mutex>& lock, time_point at) const override {
    if (now() < at) wake.wait_for(lock, std::chrono::milliseconds(1));
  }

 private:
  // An arbitrary start well inside the clock's range, so that deadlines after it fit.
  std::atomic<std::chrono::steady_clock::rep> ticks_{
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::hours(1)).count()};
};

}  // namespace pgroups::test
