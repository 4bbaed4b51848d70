#include "pgroups/mpi/watchdog.hpp"

#include <mpi.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "pgroups/common/error.hpp"

namespace pgroups::mpi {
namespace {

bool thread_level_is_multiple() noexcept {
  int level = MPI_THREAD_SINGLE;
  if (MPI_Query_thread(&level) != MPI_SUCCESS) return false;
  return level == MPI_THREAD_MULTIPLE;
}

}  // namespace

void end_process_on_timeout(const std::string& message, bool may_call_mpi) noexcept {
  constexpr int kStatus = static_cast<int>(ExitCode::timeout);
  std::fprintf(stderr,
               "pgroups: error: %s; this rank is blocked in an MPI call that cannot be cancelled, so it ends the "
               "process with status %d\n",
               message.c_str(), kStatus);
  std::fflush(stderr);
  // The main thread is blocked inside MPI. Calling MPI from this thread is only allowed
  // at MPI_THREAD_MULTIPLE; then MPI_Abort ends every rank of the job at once. At any
  // lower level another MPI call would be erroneous, so the process exits without one
  // (std::_Exit: no atexit handlers or static destructors, which could call MPI or wait
  // on the blocked thread). Launchers (mpirun, srun, hydra) end the rest of the job when
  // a rank exits with a non-zero status; the other ranks' own watchdogs end them at
  // their deadlines otherwise.
  if (may_call_mpi) MPI_Abort(MPI_COMM_WORLD, kStatus);
  std::_Exit(kStatus);
}

namespace detail {

// The one thread that watches every Watchdog of the process. A thread per watchdog cost
// a start and a join per ParallelContext, and a wake per step; on a node with more ranks
// than cores each of those is a context switch that some rank's next collective waits
// for (a quarter of a context's construction at 32 ranks on 2 cores). This thread sleeps
// until the earliest deadline among the watchdogs handed to it, and nothing wakes it
// unless a watchdog with an earlier deadline arrives.
class WatchThread {
 public:
  using Clock = Deadline::Clock;

  // Never destroyed: the thread may still be waiting when the process exits, and it must
  // not outlive its mutex.
  static WatchThread& instance() {
    static auto* const thread = new WatchThread();
    return *thread;
  }

  // Throws std::system_error when the thread cannot be started.
  void watch(Watchdog* watchdog, const Deadline& deadline) {
    const std::lock_guard lock(mutex_);
    if (!started_) {
      std::thread([this] { run(); }).detach();
      started_ = true;
    }
    watched_.push_back({deadline.at(), &deadline.clock(), watchdog});
    if (deadline.at() < sleeping_until_) wake_.notify_one();
  }

  // After this returns the thread neither holds nor will run `watchdog`'s action.
  void forget(const Watchdog* watchdog) {
    std::unique_lock lock(mutex_);
    std::erase_if(watched_, [watchdog](const Watched& entry) { return entry.watchdog == watchdog; });
    firing_done_.wait(lock, [this, watchdog] { return firing_ != watchdog; });
  }

 private:
  WatchThread() = default;

  [[noreturn]] void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      // Each deadline is measured on its own clock (tests advance theirs by hand).
      const auto due = std::find_if(watched_.begin(), watched_.end(),
                                    [](const Watched& entry) { return entry.clock->now() >= entry.at; });
      if (due == watched_.end()) {
        if (watched_.empty()) {
          sleeping_until_ = Clock::time_point::max();
          wake_.wait(lock);
        } else {
          const auto next = std::min_element(watched_.begin(), watched_.end(),
                                             [](const Watched& a, const Watched& b) { return a.at < b.at; });
          sleeping_until_ = next->at;
          next->clock->wait_until(wake_, lock, next->at);
        }
        continue;
      }
      // Past its deadline no step can be entered (enter() throws), so it is done with.
      Watchdog* const watchdog = due->watchdog;
      watched_.erase(due);
      firing_ = watchdog;
      lock.unlock();
      watchdog->fire_if_armed();
      lock.lock();
      firing_ = nullptr;
      firing_done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable firing_done_;
  struct Watched {
    Clock::time_point at;
    const WaitClock* clock;
    Watchdog* watchdog;
  };
  std::vector<Watched> watched_;
  Clock::time_point sleeping_until_ = Clock::time_point::max();
  const Watchdog* firing_ = nullptr;
  bool started_ = false;
};

}  // namespace detail

Watchdog::Watchdog(const Deadline& deadline, int rank, int size)
    : Watchdog(deadline, rank, size,
               [multiple = deadline.is_limited() && thread_level_is_multiple()](const std::string& message) {
                 end_process_on_timeout(message, multiple);
               }) {}

Watchdog::Watchdog(const Deadline& deadline, int rank, int size, Action on_expiry)
    : deadline_(deadline), rank_(rank), size_(size), on_expiry_(std::move(on_expiry)) {}

Watchdog::~Watchdog() {
  leave();
  if (watched_) detail::WatchThread::instance().forget(this);
}

Watchdog::Guard Watchdog::enter(const Step& step) {
  if (!deadline_.is_limited()) return Guard(nullptr);
  std::string message = timeout_message(deadline_.timeout(), step, rank_, size_);
  if (deadline_.expired()) throw TimeoutError(message);
  {
    const std::lock_guard lock(mutex_);
    message_ = std::move(message);
    armed_ = true;
  }
  if (!watched_) {
    try {
      detail::WatchThread::instance().watch(this, deadline_);
    } catch (...) {
      leave();
      throw;
    }
    watched_ = true;
  }
  return Guard(this);
}

Watchdog::Guard Watchdog::enter_if_possible(const Step& step) noexcept {
  try {
    return enter(step);
  } catch (...) {
    return Guard(nullptr);
  }
}

void Watchdog::leave() noexcept {
  const std::lock_guard lock(mutex_);
  armed_ = false;
}

int Watchdog::fired() const {
  const std::lock_guard lock(mutex_);
  return fired_;
}

void Watchdog::fire_if_armed() {
  std::unique_lock lock(mutex_);
  // Disarmed: the step ended before the deadline (leave() disarms under this lock).
  if (!armed_) return;
  const std::string message = message_;
  armed_ = false;
  ++fired_;
  lock.unlock();
  on_expiry_(message);
}

}  // namespace pgroups::mpi
