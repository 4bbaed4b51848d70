#include "pgroups/mpi/watchdog.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "pgroups/layout/error.hpp"

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

Watchdog::Watchdog(const Deadline& deadline, int rank, int size)
    : Watchdog(deadline, rank, size,
               [multiple = deadline.is_limited() && thread_level_is_multiple()](const std::string& message) {
                 end_process_on_timeout(message, multiple);
               }) {}

Watchdog::Watchdog(const Deadline& deadline, int rank, int size, Action on_expiry)
    : deadline_(deadline), rank_(rank), size_(size), on_expiry_(std::move(on_expiry)) {}

Watchdog::~Watchdog() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    armed_ = false;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
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
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { watch(); });
    } catch (...) {
      leave();
      throw;
    }
  }
  wake_.notify_all();
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

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (!armed_) {
      wake_.wait(lock);
      continue;
    }
    if (!deadline_.expired()) {
      deadline_.clock().wait_until(wake_, lock, deadline_.at());
      continue;
    }
    // Armed and past the deadline: the step is still blocked (leave() would have
    // disarmed it under this lock).
    const std::string message = message_;
    armed_ = false;
    ++fired_;
    lock.unlock();
    on_expiry_(message);
    lock.lock();
  }
}

}  // namespace pgroups::mpi
