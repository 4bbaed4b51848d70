#include "pgroups/launch/env_bootstrap.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pgroups/common/digest.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/launch/attempt.hpp"
#include "pgroups/launch/env_launch.hpp"
#include "pgroups/launch/store.hpp"
#include "pgroups/launch/store_keys.hpp"
#include "pgroups/launch/tcp_store.hpp"
#include "pgroups/launch/timeout.hpp"

namespace pgroups {
namespace {

std::string this_host() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// What the last rank of an all_gather_if_differing found.
constexpr std::string_view kSame = "same";
constexpr std::string_view kDifferent = "different";

class EnvBootstrap final : public Bootstrap {
 public:
  EnvBootstrap(const EnvLaunch& launch, std::chrono::milliseconds timeout, std::unique_ptr<TcpStoreServer> server)
      : server_(std::move(server)),
        rank_(launch.rank),
        size_(launch.world_size),
        timeout_(timeout),
        client_(launch.store_host, launch.store_port, timeout),
        store_(store_keys::attempt_prefix(agree_on_attempt(client_, rank_, size_, timeout)), client_) {
    learn_the_node(launch);
  }

  // The rank that serves the store keeps serving until every rank has left, so that no
  // rank loses the store while it still reads the last values.
  ~EnvBootstrap() override {
    try {
      store_.set(store_keys::bootstrap_left(rank_), "");
      if (server_) (void)store_.wait(rank_keys(store_keys::bootstrap_left), wait_limit_for_leaving());
    } catch (...) {  // NOLINT(bugprone-empty-catch): a rank gone first leaves nothing to wait for
    }
  }

  [[nodiscard]] BootstrapKind kind() const noexcept override { return BootstrapKind::env; }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] int local_rank() const noexcept override { return local_rank_; }
  [[nodiscard]] int local_size() const noexcept override { return local_size_; }

  std::vector<std::string> all_gather(std::string_view bytes, std::chrono::milliseconds timeout,
                                      std::string_view what) override {
    const std::uint64_t round = rounds_++;
    return gather(gather_keys(round), bytes, timeout, what);
  }

  // The root's key alone: a wait and a get for every other rank.
  std::string broadcast(std::string_view bytes, int root, std::chrono::milliseconds timeout,
                        std::string_view what) override {
    const std::uint64_t round = rounds_++;
    const std::string key = store_keys::bootstrap_gather(round, root);
    if (rank_ == root) {
      store_.set(key, bytes);
      return std::string(bytes);
    }
    if (!store_.wait({key}, timeout)) {
      const std::vector<int> missing_root = {root};
      throw TimeoutError(timeout_message(timeout, what, "", rank_, size_, missing_root));
    }
    return store_.get(key);
  }

  std::optional<std::vector<std::string>> all_gather_if_differing(std::string_view bytes,
                                                                  std::chrono::milliseconds timeout,
                                                                  std::string_view what) override {
    const std::uint64_t round = rounds_++;
    if (agree_by_counters(round, bytes, {}, timeout, what).same) return std::nullopt;
    return store_.get_many(gather_keys(round));
  }

  // What a member sends another under a key of its own, read by that member only: one
  // multi_set of this rank's, one wait for every key this rank reads, one multi_get (the
  // multi_set has no answer, so it goes out with the wait: two round trips in all).
  std::vector<std::vector<std::string>> exchange(const std::vector<GroupShare>& shares,
                                                 std::chrono::milliseconds timeout, std::string_view what) override {
    const Shares published = publish(shares, rounds_++);
    std::vector<std::string> values;
    if (!published.keys.empty()) {
      if (!store_.wait(published.keys, timeout)) {
        std::vector<int> ranks;
        for (const int position : missing(published.keys))
          ranks.push_back(published.senders[static_cast<std::size_t>(position)]);
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        throw TimeoutError(timeout_message(timeout, what, "", rank_, size_, ranks));
      }
      values = store_.get_many(published.keys);
    }
    return received_by_share(shares, std::move(values));
  }

  // The shares go out before the agreement's counters on this rank's one connection, so
  // that once the last rank has come every share is in the store: they are read with the
  // verdict (one multi_get), and no wait of their own is needed.
  ExchangeAndAgreement exchange_and_agree(const std::vector<GroupShare>& shares, std::string_view agreed,
                                          std::chrono::milliseconds timeout, std::string_view what) override {
    const Shares published = publish(shares, rounds_++);
    const std::uint64_t round = rounds_++;
    Verdict verdict = agree_by_counters(round, agreed, published.keys, timeout, what);
    ExchangeAndAgreement both;
    both.received = received_by_share(shares, std::move(verdict.also));
    if (!verdict.same) both.differing = store_.get_many(gather_keys(round));
    return both;
  }

  // By a counter: the rank that completes it says so, and every rank waits for that one
  // key, so that neither a request nor an answer grows with the world. Each rank's
  // arrival is also a key of its own, read only after a timeout, to name who did not come.
  void barrier(std::chrono::milliseconds timeout, std::string_view what) override {
    const std::uint64_t round = rounds_++;
    store_.set(store_keys::bootstrap_gather(round, rank_), "");
    const std::string done = store_keys::bootstrap_barrier_done(round);
    if (store_.add(store_keys::bootstrap_barrier_count(round), 1) == size_) store_.set(done, "");
    if (!store_.wait({done}, timeout)) {
      throw TimeoutError(timeout_message(timeout, what, "", rank_, size_, missing(gather_keys(round))));
    }
  }

 private:
  // What a rank found in an agreement by counters, and the keys it read with the verdict.
  struct Verdict {
    bool same = false;
    std::vector<std::string> also;
  };

  // By counters: each rank adds one to its bytes' digest and one to the ranks come (one
  // round trip for both); the last to come reads its digest's count and says whether
  // every rank gave the same bytes. Every rank's bytes are under its gather key, read only
  // when they differ (or, after a timeout, to name who did not come). `also`, keys that
  // every rank wrote before it came, are read with the verdict.
  Verdict agree_by_counters(std::uint64_t round, std::string_view bytes, const std::vector<std::string>& also,
                            std::chrono::milliseconds timeout, std::string_view what) {
    const std::vector<std::string> keys = gather_keys(round);
    store_.set(keys[static_cast<std::size_t>(rank_)], bytes);
    const std::string same = store_keys::bootstrap_agree_same(round, text_digest(bytes));
    const std::string verdict = store_keys::bootstrap_agree_verdict(round);
    const std::vector<std::int64_t> counts =
        store_.add_many({{same, 1}, {store_keys::bootstrap_agree_arrived(round), 1}});
    Verdict found;
    if (counts[1] == size_) {
      // Every rank added to its digest before it came: the count is whole now.
      found.same = store_.add(same, 0) == size_;
      store_.set(verdict, found.same ? kSame : kDifferent);
      found.also = store_.get_many(also);
      return found;
    }
    if (!store_.wait({verdict}, timeout)) {
      throw TimeoutError(timeout_message(timeout, what, "", rank_, size_, missing(keys)));
    }
    std::vector<std::string> wanted = also;
    wanted.push_back(verdict);
    found.also = store_.get_many(wanted);
    found.same = found.also.back() == kSame;
    found.also.pop_back();
    return found;
  }

  // What this rank sends its groups' members, each under a key for that pair, and the keys
  // it reads (share by share), with each key's sender.
  struct Shares {
    std::vector<std::string> keys;
    std::vector<int> senders;
  };

  Shares publish(const std::vector<GroupShare>& shares, std::uint64_t round) {
    std::vector<std::pair<std::string, std::string>> sent;
    Shares published;
    for (const GroupShare& share : shares) {
      const auto mine = static_cast<std::size_t>(
          std::find(share.members.begin(), share.members.end(), std::int64_t{rank_}) - share.members.begin());
      for (std::size_t other = 0; other < share.members.size(); ++other) {
        if (other == mine) continue;
        sent.emplace_back(store_keys::bootstrap_share(round, share.name, mine, other), share.to_each.at(other));
        published.keys.push_back(store_keys::bootstrap_share(round, share.name, other, mine));
        published.senders.push_back(static_cast<int>(share.members[other]));
      }
    }
    store_.set_many(sent);  // no answer: it goes out with the next request
    return published;
  }

  // The values read, in publish()'s order, by share and position (this rank's own empty).
  [[nodiscard]] std::vector<std::vector<std::string>> received_by_share(const std::vector<GroupShare>& shares,
                                                                        std::vector<std::string> values) const {
    std::vector<std::vector<std::string>> answer;
    std::size_t next = 0;
    for (const GroupShare& share : shares) {
      std::vector<std::string>& received = answer.emplace_back(share.members.size());
      for (std::size_t position = 0; position < share.members.size(); ++position) {
        if (share.members[position] != rank_) received[position] = std::move(values[next++]);
      }
    }
    return answer;
  }

  // Every rank's key of the collective `round`.
  [[nodiscard]] std::vector<std::string> gather_keys(std::uint64_t round) const {
    return rank_keys([round](int r) { return store_keys::bootstrap_gather(round, r); });
  }

  template <typename KeyOf>
  [[nodiscard]] std::vector<std::string> rank_keys(KeyOf key_of) const {
    std::vector<std::string> keys;
    keys.reserve(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) keys.push_back(key_of(r));
    return keys;
  }

  std::vector<std::string> gather(const std::vector<std::string>& keys, std::string_view bytes,
                                  std::chrono::milliseconds timeout, std::string_view what) {
    store_.set(keys[static_cast<std::size_t>(rank_)], bytes);
    if (!store_.wait(keys, timeout)) {
      throw TimeoutError(timeout_message(timeout, what, "", rank_, size_, missing(keys)));
    }
    return store_.get_many(keys);
  }

  // The node: the launcher's local rank, or, without one, the ranks of this host name.
  // (Every rank's WORLD_SIZE is rank 0's: the attempt's agreement checked it.)
  void learn_the_node(const EnvLaunch& launch) {
    if (launch.local_rank) {
      local_rank_ = *launch.local_rank;
      local_size_ = *launch.local_size;
      return;
    }
    store_.set(store_keys::bootstrap_host(rank_), this_host());
    count_ranks_of_this_host();
  }

  // Without LOCAL_RANK: this rank's index among the ranks of its host name, and their number.
  void count_ranks_of_this_host() {
    const std::vector<std::string> keys = rank_keys(store_keys::bootstrap_host);
    if (!store_.wait(keys, timeout_)) {
      throw TimeoutError(
          timeout_message(timeout_, "the host names of the env bootstrap", "", rank_, size_, missing(keys)));
    }
    const std::string mine = this_host();
    const std::vector<std::string> hosts = store_.get_many(keys);
    local_rank_ = 0;
    local_size_ = 0;
    for (int r = 0; r < size_; ++r) {
      if (hosts[static_cast<std::size_t>(r)] != mine) continue;
      if (r < rank_) ++local_rank_;
      ++local_size_;
    }
  }

  // The positions of the keys not in the store (the timed-out wait was cancelled, so the
  // same connection asks); a world's keys are by rank.
  std::vector<int> missing(const std::vector<std::string>& keys) {
    std::vector<int> ranks;
    try {
      for (std::size_t r = 0; r < keys.size(); ++r) {
        if (!store_.check({keys[r]})) ranks.push_back(static_cast<int>(r));
      }
    } catch (const Error&) {
      ranks.clear();  // the store is gone too: the message then names no rank
    }
    return ranks;
  }

  // How long the serving rank waits for the others to leave: the timeout, or a named
  // bound where there is none, so that a rank that died never keeps it serving forever.
  [[nodiscard]] std::chrono::milliseconds wait_limit_for_leaving() const {
    return is_limited(timeout_) ? timeout_ : kStoreServingWhenUnlimited;
  }

  std::unique_ptr<TcpStoreServer> server_;  // rank 0's, when no launcher serves; outlives the client
  int rank_;
  int size_;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::uint64_t rounds_ = 0;
  std::chrono::milliseconds timeout_;  // the bootstrap's own: connecting, the start, rank 0's wait for the others
  TcpStoreClient client_;
  PrefixStore store_;  // this attempt's keys, once every rank agreed on the attempt
};

}  // namespace

std::unique_ptr<Bootstrap> make_env_bootstrap(std::chrono::milliseconds timeout, const EnvironmentLookup& lookup) {
  const EnvLaunch launch = read_env_launch(lookup);
  std::unique_ptr<TcpStoreServer> server;
  if (!launch.agent_serves_store && launch.rank == 0) server = std::make_unique<TcpStoreServer>(launch.store_port);
  return std::make_unique<EnvBootstrap>(launch, timeout, std::move(server));
}

}  // namespace pgroups
