#pragma once
/// \file
/// The clock that deadlines are measured on (mpi::Deadline, and so the Watchdog). In
/// production it is the steady clock (steady_wait_clock(), the default everywhere);
/// tests pass a clock of their own that they advance by hand, so that "the deadline has
/// passed" is a step of the test rather than a sleep of a guessed length.

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace pgroups::mpi {

class WaitClock {
 public:
  /// Time points of the steady clock's type, so that deadline_after and every comparison
  /// are the same for each clock.
  using time_point = std::chrono::steady_clock::time_point;

  WaitClock() = default;
  WaitClock(const WaitClock&) = delete;
  WaitClock& operator=(const WaitClock&) = delete;
  virtual ~WaitClock() = default;

  [[nodiscard]] virtual time_point now() const noexcept = 0;

  /// Waits on `wake` (with `lock` held, as std::condition_variable::wait_until) until it
  /// is notified or this clock reaches `at`. It may return early, as condition variables
  /// do: callers check their condition and the time again.
  virtual void wait_until(std::condition_variable& wake, std::unique_lock<std::mutex>& lock, time_point at) const = 0;
};

/// std::chrono::steady_clock as a WaitClock: the clock of every deadline unless a test
/// passes another. Lives for the whole program.
[[nodiscard]] const WaitClock& steady_wait_clock() noexcept;

}  // namespace pgroups::mpi
