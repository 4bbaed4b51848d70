// The agreement on the launcher's attempt (pgroups/launch/attempt.hpp) against a real TCP
// store, ranks as threads: every rank of one attempt gets its number whatever each one
// saw before, a dead attempt's keys never pass for the new one's, and the cost per rank
// does not grow with the world.

#include "pgroups/launch/attempt.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/tcp_store.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using namespace std::chrono_literals;

// A store that counts its requests, around the real client.
class CountingStore final : public Store {
 public:
  explicit CountingStore(Store& inner) : inner_(inner) {}
  void set(std::string_view key, std::string_view value) override {
    ++requests;
    inner_.set(key, value);
  }
  std::string get(std::string_view key) override {
    ++requests;
    return inner_.get(key);
  }
  std::int64_t add(std::string_view key, std::int64_t delta) override {
    ++requests;
    return inner_.add(key, delta);
  }
  bool check(const std::vector<std::string>& keys) override {
    ++requests;
    return inner_.check(keys);
  }
  bool wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    ++requests;
    return inner_.wait(keys, timeout);
  }
  [[nodiscard]] std::string address() const override { return inner_.address(); }
  int requests = 0;

 private:
  Store& inner_;
};

struct Outcome {
  std::int64_t attempt = 0;
  int requests = 0;
  std::exception_ptr error;
};

// One attempt: the ranks in `ranks` (of a world of `size`) agree through the store at
// `port`, each after `delay(rank)`, with `timeout`; rank r's world size is `size_of(r)`.
std::vector<Outcome> attempt(
    std::uint16_t port, int size, const std::vector<int>& ranks, std::chrono::milliseconds timeout = 10s,
    const std::function<std::chrono::milliseconds(int)>& delay = [](int) { return 0ms; },
    const std::function<int(int)>& size_of = {}) {
  std::vector<Outcome> outcomes(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (const int rank : ranks) {
    threads.emplace_back([&, rank] {
      Outcome& outcome = outcomes[static_cast<std::size_t>(rank)];
      try {
        std::this_thread::sleep_for(delay(rank));
        TcpStoreClient client("127.0.0.1", port, 10s);
        CountingStore counting(client);
        outcome.attempt = agree_on_attempt(counting, rank, size_of ? size_of(rank) : size, timeout);
        outcome.requests = counting.requests;
      } catch (...) {
        outcome.error = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

void expect_all(const std::vector<Outcome>& outcomes, std::int64_t number) {
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    if (outcomes[r].error) {
      try {
        std::rethrow_exception(outcomes[r].error);
      } catch (const std::exception& error) {
        ADD_FAILURE() << "rank " << r << ": " << error.what();
      }
    }
    EXPECT_EQ(outcomes[r].attempt, number) << "rank " << r;
  }
}

TEST(Attempt, EveryRankOfOneAttemptGetsOneNumberAndTheNextAttemptTheNext) {
  TcpStoreServer store(0);
  expect_all(attempt(store.port(), 4, {0, 1, 2, 3}), 1);
  // The others first this time: they must wait for rank 0's attempt, not take the last.
  expect_all(attempt(store.port(), 4, {0, 1, 2, 3}, 10s, [](int rank) { return rank == 0 ? 300ms : 0ms; }), 2);
}

// An attempt that died before one of its ranks arrived: the others joined it, so its
// count stands one short. The next attempt's late rank 0 and early rank 3 (which never
// joined the dead one) must still meet in the new attempt, not in the dead one.
TEST(Attempt, ADeadAttemptThatARankNeverJoinedIsNotTheNewOne) {
  TcpStoreServer store(0);
  expect_all(attempt(store.port(), 4, {0, 1, 2, 3}), 1);
  const std::vector<Outcome> dead = attempt(store.port(), 4, {0, 1, 2}, 300ms);
  ASSERT_TRUE(dead[0].error);
  const std::string message = [&] {
    try {
      std::rethrow_exception(dead[0].error);
    } catch (const TimeoutError& error) {
      return std::string(error.what());
    } catch (...) {
      return std::string("another error");
    }
  }();
  EXPECT_NE(message.find("the agreement on the launcher's attempt (rank 0 of 4): rank 3 did not arrive"),
            std::string::npos)
      << message;
  expect_all(attempt(store.port(), 4, {0, 1, 2, 3}, 10s, [](int rank) { return rank == 0 ? 300ms : 0ms; }), 3);
}

TEST(Attempt, AWorldSizeOtherThanRankZerosIsAConfigErrorNamingBoth) {
  TcpStoreServer store(0);
  const std::vector<Outcome> outcomes =
      attempt(store.port(), 2, {0, 1}, 10s, [](int) { return 0ms; }, [](int rank) { return rank == 0 ? 2 : 3; });
  EXPECT_FALSE(outcomes[0].error);
  ASSERT_TRUE(outcomes[1].error);
  try {
    std::rethrow_exception(outcomes[1].error);
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), "WORLD_SIZE is 3 on rank 1 but 2 on rank 0: every rank of one job gives the same");
  } catch (...) {
    ADD_FAILURE() << "not a ConfigError";
  }
}

// Counted in the client: a rank's requests are the same for 4 ranks and for 32.
TEST(Attempt, TheRequestsOfARankDoNotGrowWithTheWorld) {
  TcpStoreServer store(0);
  std::vector<int> small_ranks(4), large_ranks(32);
  for (int r = 0; r < 4; ++r) small_ranks[static_cast<std::size_t>(r)] = r;
  for (int r = 0; r < 32; ++r) large_ranks[static_cast<std::size_t>(r)] = r;
  const auto late_rank0 = [](int rank) { return rank == 0 ? 200ms : 0ms; };
  const std::vector<Outcome> small = attempt(store.port(), 4, small_ranks, 10s, late_rank0);
  TcpStoreServer other(0);
  const std::vector<Outcome> large = attempt(other.port(), 32, large_ranks, 10s, late_rank0);
  expect_all(small, 1);
  expect_all(large, 1);
  int most_small = 0, most_large = 0;
  for (const Outcome& outcome : small) most_small = std::max(most_small, outcome.requests);
  for (const Outcome& outcome : large) most_large = std::max(most_large, outcome.requests);
  EXPECT_EQ(most_small, most_large);
  EXPECT_LE(most_large, 12);
}

}  // namespace
}  // namespace pgroups
