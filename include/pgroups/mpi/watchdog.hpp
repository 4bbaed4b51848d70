#pragma once
/// \file
/// Watchdog: ends the process when a blocking collective step (MPI_Comm_split, a
/// blocking MPI_Allgather, MPI_Finalize: calls MPI can neither time out nor cancel) is
/// still running at its deadline, so that a rank that never arrives cannot keep the
/// others waiting forever. ParallelContext watches its blocking steps with it, and
/// programs watch their own collectives after construction (`pgroups verify` and
/// `bench` do). Steps that can be waited for without blocking (dup_until, min_until)
/// throw TimeoutError instead and need no watchdog.

#include <functional>
#include <mutex>
#include <string>

#include "pgroups/mpi/deadline.hpp"

namespace pgroups::mpi {

namespace detail {
class WatchThread;
}

class Watchdog {
 public:
  /// What happens when a step outlives the deadline, given the timeout message. The
  /// default ends the process (end_process_on_timeout); tests pass a recorder, after
  /// which the watchdog disarms and the step goes on.
  using Action = std::function<void(const std::string& message)>;

  /// A watchdog for the steps of one rank (`rank` of `size`, for messages) that must all
  /// be done by `deadline` (unlimited: never fires), measured on the deadline's clock. One thread of the process
  /// watches every watchdog; it starts at the first enter() of the process, never for an unlimited deadline, and then
  /// serves every later watchdog. Must be constructed on a thread that may call MPI.
  Watchdog(const Deadline& deadline, int rank, int size);
  Watchdog(const Deadline& deadline, int rank, int size, Action on_expiry);

  /// Disarms, and waits for an action of this watchdog that is running: nothing fires
  /// after the destructor returns.
  ~Watchdog();

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Marks the end of a step on destruction.
  class [[nodiscard]] Guard {
   public:
    explicit Guard(Watchdog* owner) noexcept : owner_(owner) {}
    ~Guard() {
      if (owner_ != nullptr) owner_->leave();
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    Watchdog* owner_;
  };

  /// Arms the watchdog for `step`, which is about to block: if the step is still running
  /// at the deadline, the action runs with timeout_message(step). Throws TimeoutError at
  /// once when the deadline has already passed (nothing blocks yet, so throwing is still
  /// safe), and std::system_error when the thread cannot be started. One step at a time.
  [[nodiscard]] Guard enter(const Step& step);
  /// As enter(), but never throws: when the deadline has passed or the thread cannot
  /// start, the step runs unwatched. For steps that must run anyway, such as freeing.
  [[nodiscard]] Guard enter_if_possible(const Step& step) noexcept;

  /// How many times the action ran; for tests. Thread-safe.
  [[nodiscard]] int fired() const;

 private:
  friend class detail::WatchThread;
  void leave() noexcept;
  // Called by the watching thread at the deadline: runs the action if a step is still in.
  void fire_if_armed();

  Deadline deadline_;
  int rank_;
  int size_;
  Action on_expiry_;
  mutable std::mutex mutex_;
  bool armed_ = false;
  int fired_ = 0;
  std::string message_;
  bool watched_ = false;  // handed to the watching thread; only the owner's thread reads it
};

/// Prints "pgroups: error: <message>; ..." on stderr and ends the process with
/// ExitCode::timeout: MPI_Abort on MPI_COMM_WORLD when `may_call_mpi` (the thread level
/// is MPI_THREAD_MULTIPLE), otherwise std::_Exit. Never returns.
[[noreturn]] void end_process_on_timeout(const std::string& message, bool may_call_mpi) noexcept;

}  // namespace pgroups::mpi
