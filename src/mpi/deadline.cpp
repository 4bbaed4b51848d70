#include "pgroups/mpi/deadline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/mpi/check.hpp"

namespace pgroups::mpi {
namespace {

// A nonblocking collective and everything MPI may still write while it runs.
struct Pending {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Comm result = MPI_COMM_NULL;
  std::vector<std::int64_t> input;
  std::vector<std::int64_t> output;
  std::string bytes;           // all_gather_until's own
  std::vector<char> gathered;  // ... and every rank's, with their lengths and offsets
  std::vector<int> lengths;
  std::vector<int> offsets;
};

// A collective abandoned at its deadline can still complete later, inside any MPI call,
// and write into its buffers; MPI forbids freeing or cancelling its request. So its state
// is kept for the rest of the process, in a list that is never destroyed (and stays
// reachable, so that leak checkers do not report it). A timeout normally ends the job
// soon after, so this holds at most a few entries.
void abandon(std::unique_ptr<Pending> pending) noexcept {
  static std::mutex mutex;
  static auto* const kept = new std::vector<std::unique_ptr<Pending>>();
  const std::lock_guard lock(mutex);
  try {
    kept->push_back(std::move(pending));
  } catch (...) {
    // push_back left `pending` untouched; dropping the pointer still keeps the state
    // alive, which is all that matters here.
    static_cast<void>(pending.release());
  }
}

// MPI_Test rather than MPI_Wait, so that the deadline is seen. For the first few
// milliseconds the tests come back to back, since most steps complete soon after the last rank's
// arrival; after that the rank sleeps between tests, up to 100 us, so that on an
// oversubscribed node it gives its core to the ranks it is waiting for.
bool complete_by(MPI_Request& request, const Deadline& deadline) {
  if (!deadline.is_limited()) {
    check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    return true;
  }
  // Eager by time, not by count: nonblocking collectives such as MPI_Comm_idup progress
  // only inside MPI_Test, so a rank that sleeps too early delays every other rank's round.
  constexpr auto kEagerPeriod = std::chrono::milliseconds(5);
  const auto eager_until = std::chrono::steady_clock::now() + kEagerPeriod;
  // Short enough that a rank wakes soon after the others arrive (the pause is added
  // latency on every step), long enough to hand its core over on an oversubscribed node.
  constexpr auto kLongestPause = std::chrono::microseconds(100);
  auto pause = std::chrono::microseconds(5);
  while (true) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) return true;
    if (deadline.expired()) return false;
    // No yield of its own while eager: MPI_Test already yields when it finds nothing to do
    // where the launcher asked it to (mpi_yield_when_idle, oversubscribed nodes), and a
    // second yield per test hands the core away twice per round.
    if (std::chrono::steady_clock::now() >= eager_until) {
      std::this_thread::sleep_for(pause);
      pause = std::min(2 * pause, kLongestPause);
    }
  }
}

// Completes `pending`, or abandons it and throws TimeoutError naming `step`.
void finish_by(std::unique_ptr<Pending>& pending, const Deadline& deadline, const Step& step,
               const Communicator& comm) {
  if (complete_by(pending->request, deadline)) return;
  const int rank = comm.rank();
  const int size = comm.size();
  abandon(std::move(pending));
  throw TimeoutError(timeout_message(deadline.timeout(), step, rank, size));
}

}  // namespace

namespace {

class SteadyWaitClock final : public WaitClock {
 public:
  [[nodiscard]] time_point now() const noexcept override { return std::chrono::steady_clock::now(); }
  void wait_until(std::condition_variable& wake, std::unique_lock<std::mutex>& lock, time_point at) const override {
    wake.wait_until(lock, at);
  }
};

}  // namespace

const WaitClock& steady_wait_clock() noexcept {
  static const SteadyWaitClock clock;
  return clock;
}

Deadline::Deadline(std::chrono::milliseconds timeout, const WaitClock& clock) noexcept
    : timeout_(std::max(timeout, std::chrono::milliseconds::zero())),
      at_(is_limited() ? deadline_after(clock.now(), timeout_) : Clock::time_point{}),
      clock_(&clock) {}

std::string timeout_message(std::chrono::milliseconds timeout, const Step& step, int rank, int size) {
  return pgroups::timeout_message(timeout, step.description, step.name, rank, size);
}

void throw_if_expired(const Deadline& deadline, const Step& step, const Communicator& comm) {
  if (deadline.expired()) throw TimeoutError(timeout_message(deadline.timeout(), step, comm.rank(), comm.size()));
}

Communicator dup_until(const Communicator& comm, const Deadline& deadline, const Step& step) {
  throw_if_expired(deadline, step, comm);
  auto pending = std::make_unique<Pending>();
  check(MPI_Comm_idup(comm.get(), &pending->result, &pending->request), "MPI_Comm_idup");
  finish_by(pending, deadline, step, comm);
  return Communicator::adopt(pending->result);
}

void barrier_until(const Communicator& comm, const Deadline& deadline, const Step& step) {
  throw_if_expired(deadline, step, comm);
  auto pending = std::make_unique<Pending>();
  check(MPI_Ibarrier(comm.get(), &pending->request), "MPI_Ibarrier");
  finish_by(pending, deadline, step, comm);
}

std::vector<std::int64_t> min_until(const Communicator& comm, std::span<const std::int64_t> values,
                                    const Deadline& deadline, const Step& step) {
  throw_if_expired(deadline, step, comm);
  auto pending = std::make_unique<Pending>();
  pending->input.assign(values.begin(), values.end());
  pending->output.assign(values.size(), 0);
  check(MPI_Iallreduce(pending->input.data(), pending->output.data(), static_cast<int>(values.size()), MPI_INT64_T,
                       MPI_MIN, comm.get(), &pending->request),
        "MPI_Iallreduce");
  finish_by(pending, deadline, step, comm);
  return std::move(pending->output);
}

std::vector<std::string> all_gather_until(const Communicator& comm, std::string_view bytes, const Deadline& deadline,
                                          const Step& step) {
  throw_if_expired(deadline, step, comm);
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw ConfigError(
        fmt::format("{}: {} bytes are more than one MPI all-gather carries", step.description, bytes.size()));
  }
  const auto size = static_cast<std::size_t>(comm.size());
  auto pending = std::make_unique<Pending>();
  pending->bytes = std::string(bytes);
  pending->input = {static_cast<std::int64_t>(bytes.size())};
  pending->output.assign(size, 0);
  check(MPI_Iallgather(pending->input.data(), 1, MPI_INT64_T, pending->output.data(), 1, MPI_INT64_T, comm.get(),
                       &pending->request),
        "MPI_Iallgather");
  finish_by(pending, deadline, step, comm);
  std::int64_t total = 0;
  for (const std::int64_t length : pending->output) {
    pending->offsets.push_back(static_cast<int>(total));
    pending->lengths.push_back(static_cast<int>(length));
    total += length;
  }
  if (total > std::numeric_limits<int>::max()) {
    throw ConfigError(
        fmt::format("{}: {} bytes from all ranks are more than one MPI all-gather carries", step.description, total));
  }
  pending->gathered.assign(static_cast<std::size_t>(total), '\0');
  check(MPI_Iallgatherv(pending->bytes.data(), static_cast<int>(pending->bytes.size()), MPI_CHAR,
                        pending->gathered.data(), pending->lengths.data(), pending->offsets.data(), MPI_CHAR,
                        comm.get(), &pending->request),
        "MPI_Iallgatherv");
  finish_by(pending, deadline, step, comm);
  std::vector<std::string> result;
  result.reserve(size);
  for (std::size_t r = 0; r < size; ++r) {
    result.emplace_back(pending->gathered.data() + pending->offsets[r], static_cast<std::size_t>(pending->lengths[r]));
  }
  return result;
}

}  // namespace pgroups::mpi
