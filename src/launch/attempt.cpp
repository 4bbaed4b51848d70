#include "pgroups/launch/attempt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/store_keys.hpp"
#include "pgroups/launch/timeout.hpp"

namespace pgroups {
namespace {

namespace keys = store_keys;

constexpr std::string_view kGo = "go";
constexpr std::string_view kSuperseded = "superseded";

// The agreement's store and its one deadline, for every wait of it.
class Agreement {
 public:
  Agreement(Store& store, int rank, int size, std::chrono::milliseconds timeout)
      : store_(store),
        rank_(rank),
        size_(size),
        timeout_(timeout),
        deadline_(deadline_after(std::chrono::steady_clock::now(), timeout)) {}

  std::int64_t open() {
    const std::int64_t attempt = store_.add(keys::attempt_count(), 1);
    // The newest attempt a process of this one could have found before this line: any
    // of them waiting in it goes on to this one.
    if (attempt > 1) store_.set(keys::attempt_verdict(attempt - 1), kSuperseded);
    store_.set(keys::attempt_opened(attempt), std::to_string(size_));
    join(attempt, size_);
    wait(keys::attempt_full(attempt), [&] { return not_joined(attempt); });
    store_.set(keys::attempt_verdict(attempt), kGo);
    return attempt;
  }

  std::int64_t join_rank0s() {
    // This rank's last attempt (0 before any: an add of 0 reads a counter that is not
    // there as 0) and the newest attempt, in one round trip.
    const std::vector<std::int64_t> now = store_.add_many({{keys::attempt_seen(rank_), 0}, {keys::attempt_count(), 0}});
    std::int64_t seen = now[0];
    std::int64_t attempt = now[1];
    while (true) {
      // Where rank 0 has not opened one since this rank's last, the next is this rank's:
      // rank 0 opens it (or a later rank 0 supersedes it, and the verdict says so). Either
      // way the same turns as joining an open one: the rank that came early pays no more.
      if (attempt <= seen) attempt = seen + 1;
      wait(keys::attempt_opened(attempt), [] { return std::vector<int>{0}; });
      const std::int64_t size_of_rank0 = join_opened(attempt);
      wait(keys::attempt_verdict(attempt), [] { return std::vector<int>{0}; });
      if (store_.get(keys::attempt_verdict(attempt)) == kGo) {
        if (size_of_rank0 != size_) {
          throw ConfigError(
              fmt::format("WORLD_SIZE is {} on rank {} but {} on rank 0: every rank of one job gives the same", size_,
                          rank_, size_of_rank0));
        }
        return attempt;
      }
      seen = attempt;  // a dead attempt's: on to rank 0's
      attempt = store_.add(keys::attempt_count(), 0);
    }
  }

 private:
  // This rank's process has joined `attempt` (so that the rank's next process skips it),
  // and one more rank is in it; the rank that makes it rank 0's world size says so.
  void join(std::int64_t attempt, std::int64_t size_of_rank0) {
    store_.set(keys::attempt_seen(rank_), std::to_string(attempt));
    if (store_.add(keys::attempt_joined(attempt), 1) == size_of_rank0) store_.set(keys::attempt_full(attempt), "");
  }

  // join() on an attempt rank 0 opened, reading rank 0's world size in the same round trip
  // (the opened key holds it as a count); returns that size.
  std::int64_t join_opened(std::int64_t attempt) {
    store_.set(keys::attempt_seen(rank_), std::to_string(attempt));
    const std::vector<std::int64_t> counts =
        store_.add_many({{keys::attempt_opened(attempt), 0}, {keys::attempt_joined(attempt), 1}});
    if (counts[1] == counts[0]) store_.set(keys::attempt_full(attempt), "");
    return counts[0];
  }

  // Waits for `key`; past the deadline, TimeoutError naming the ranks `missing` gives.
  void wait(const std::string& key, const std::function<std::vector<int>()>& missing) {
    if (!store_.wait({key}, remaining())) {
      const std::vector<int> ranks = missing();
      throw TimeoutError(timeout_message(timeout_, "the agreement on the launcher's attempt", "", rank_, size_, ranks));
    }
  }

  // The time left, never zero where there is a timeout (zero would mean none).
  [[nodiscard]] std::chrono::milliseconds remaining() const {
    if (!is_limited(timeout_)) return std::chrono::milliseconds::zero();
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
    return std::max(left, std::chrono::milliseconds(1));
  }

  // The ranks that had not joined `attempt` when rank 0 gave up on it (the failure path only).
  std::vector<int> not_joined(std::int64_t attempt) {
    std::vector<int> ranks;
    try {
      for (int r = 1; r < size_; ++r) {
        const std::string seen = keys::attempt_seen(r);
        if (!store_.check({seen}) || store_.get(seen) != std::to_string(attempt)) ranks.push_back(r);
      }
    } catch (const Error&) {
      ranks.clear();  // the store is gone too: the message names no rank
    }
    return ranks;
  }

  Store& store_;
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace

std::int64_t agree_on_attempt(Store& store, int rank, int world_size, std::chrono::milliseconds timeout) {
  PrefixStore scope(keys::attempts_prefix(), store);
  Agreement agreement(scope, rank, world_size, timeout);
  return rank == 0 ? agreement.open() : agreement.join_rank0s();
}

}  // namespace pgroups
