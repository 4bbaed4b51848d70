#pragma once
// One emulated client's conversation with the store (store_traffic_emulation.hpp): the
// requests of each turn, request for request as src/launch/env_bootstrap.cpp, attempt.cpp
// and tcp_store.cpp make them, or as torch's new_group loop does, from the answers to the
// turn before. Private to the emulation.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "launch/store_protocol.hpp"
#include "pgroups/common/digest.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/emulation/store_traffic_emulation.hpp"
#include "pgroups/launch/store_keys.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups::emulation_detail {

namespace protocol = store_protocol;
namespace keys = store_keys;
using protocol::Query;

// What a gloo peer's compact pair address is on the wire, and an NCCL unique id.
constexpr std::size_t kCompactAddressBytes = 25;
constexpr std::size_t kNcclIdBytes = 128;
// Connections whose store has not answered the ping yet, at most: the server's listen
// backlog is bounded (SOMAXCONN), and a dropped SYN costs a second.
constexpr std::size_t kMostConnecting = 512;
// The rounds of the env bootstrap's collectives in a creation on a fresh bootstrap.
constexpr std::uint64_t kConfigurationRound = 0;
constexpr std::uint64_t kExchangeRound = 1;
constexpr std::uint64_t kPreparationRound = 2;
constexpr std::int64_t kAttempt = 1;  // a fresh store's first attempt

// The requests of one turn, as pgroups' client writes them (a key goes with a leading '/'),
// and the shapes of the answers they get: a count of fixed bytes, or -1 for a field.
class Turn {
 public:
  void set(std::string_view key, std::string_view value) {
    begin(Query::set);
    key_field(key);
    protocol::append_field(bytes_, value);
  }
  void add(std::string_view key, std::int64_t delta) {
    begin(Query::add);
    key_field(key);
    protocol::append(bytes_, delta);
    answers_.push_back(sizeof(std::int64_t));
  }
  void get(std::string_view key) {
    begin(Query::get);
    key_field(key);
    answers_.push_back(-1);
  }
  void wait(const std::vector<std::string>& names) {
    with_keys(Query::wait, names);
    answers_.push_back(1);
  }
  void multi_get(const std::vector<std::string>& names) {
    with_keys(Query::multi_get, names);
    answers_.insert(answers_.end(), names.size(), -1);
  }
  void multi_set(const std::vector<std::pair<std::string, std::string>>& values) {
    if (values.empty()) return;
    begin(Query::multi_set);
    protocol::append<std::uint64_t>(bytes_, values.size());
    for (const auto& [key, value] : values) {
      key_field(key);
      protocol::append_field(bytes_, value);
    }
  }
  void connect() {
    begin(Query::validate);
    protocol::append(bytes_, protocol::kValidationMagic);
    begin(Query::ping);
    protocol::append<std::uint32_t>(bytes_, 7);
    answers_.push_back(sizeof(std::uint32_t));
  }

  std::string bytes_;
  std::vector<int> answers_;
  std::int64_t requests_ = 0;

 private:
  void begin(Query query) {
    protocol::append(bytes_, query);
    ++requests_;
  }
  void key_field(std::string_view key) {
    protocol::append<std::uint64_t>(bytes_, key.size() + 1);
    bytes_ += '/';
    bytes_ += key;
  }
  void with_keys(Query query, const std::vector<std::string>& names) {
    begin(query);
    protocol::append<std::uint64_t>(bytes_, names.size());
    for (const std::string& name : names) key_field(name);
  }
};

inline std::int64_t count_of(const std::string& answer) {
  std::int64_t value = 0;
  std::memcpy(&value, answer.data(), std::min(answer.size(), sizeof value));
  return value;
}

inline std::string in_attempts(std::string_view key) { return keys::attempts_prefix() + std::string(key); }
inline std::string in_attempt(std::string_view key) { return keys::attempt_prefix(kAttempt) + std::string(key); }

// Where a client is in its conversation: each step reads the answers to the last turn and
// writes the next.
enum class Step {
  connect,
  open,          // rank 0's client: opens the attempt
  join_opened,   //   ... publishes it and joins
  wait_full,     //   ... waits for every rank
  go,            //   ... says "go"
  join,          // the others: their ranks' last attempts and the newest
  after_join,    //   ... waits for the attempt to be open
  joined,        //   ... joins it
  wait_verdict,  //   ... waits for its verdict
  attempt_get,   //   ... reads it
  attempt_done,  //   ... "go"
  agree_counts,  // an agreement: the counts after this client's adds
  agree_last,    //   ... the last to come reads its digest's count
  agree_get,     //   ... the others read the verdict
  agree_done,    //   ... "same"
  agree_read,    //   ... the last reads the exchange's keys
  loop_count,    // torch's store-based barrier: read the count
  loop_wait,     //   ... wait for its last worker
  loop_done,     //   ... on to the next group
  done,
};

struct Client {
  int fd = -1;
  std::int64_t first = 0;  // its ranks: [first, first + ranks)
  std::int64_t ranks = 1;
  Step step = Step::connect;
  std::uint64_t round = 0;        // the agreement's round
  std::int64_t loop_group = 0;    // new_group_loop: the group being created
  std::string out;
  std::string in;
  std::size_t in_read = 0;        // what parse() has consumed of `in`
  std::vector<int> expected;
  std::vector<std::string> answers;
  bool connected = false;
  bool ping_pending = false;
  bool heard = true;  // the store answered since this client last sent: a new turn
  std::int64_t turns = 0;
  std::int64_t bytes_read = 0;
  std::int64_t requests = 0;
  std::int64_t bytes_sent = 0;
  std::vector<std::string> reads;  // the exchange's keys this client reads

  [[nodiscard]] bool holds(std::int64_t rank) const { return rank >= first && rank < first + ranks; }
};

class Conversation {
 public:
  Conversation(const Layout& layout, const EmulationOptions& options)
      : layout_(layout),
        options_(options),
        world_(layout.world_size()),
        sharing_(communicator_sharing(layout)),
        record_(layout.summary()) {}

  // Writes `c`'s next turn from the answers to its last; none once it is done.
  void advance(Client& c) {
    Turn turn;
    step(c, turn);
    if (!turn.bytes_.empty()) {
      if (c.heard) ++c.turns;
      c.heard = false;
      c.out += turn.bytes_;
      c.requests += turn.requests_;
      c.bytes_sent += static_cast<std::int64_t>(turn.bytes_.size());
    }
    c.expected = std::move(turn.answers_);
    if (c.expected.empty() && c.step != Step::done) {
      throw BackendError(fmt::format("store emulation: the conversation of ranks {}.. stalled", c.first));
    }
  }

  [[nodiscard]] std::int64_t groups() const {
    std::int64_t all = 0;
    for (std::size_t kind = 0; kind < layout_.group_kinds().size(); ++kind) all += layout_.group_count(kind);
    return all;
  }
  [[nodiscard]] std::int64_t loop_groups() const {
    const std::int64_t all = groups();
    return options_.loop_groups > 0 ? std::min(options_.loop_groups, all) : all;
  }

 private:
  // Connecting and the attempt (launch/attempt.cpp): rank 0's client opens attempt 1,
  // the others join it.
  void step(Client& c, Turn& turn) {
    if (c.ping_pending) {  // the ping's answer came first
      c.answers.erase(c.answers.begin());
      c.ping_pending = false;
    }
    const std::string opened = in_attempts(keys::attempt_opened(kAttempt));
    switch (c.step) {
      case Step::connect:
        turn.connect();
        if (options_.traffic == EmulatedTraffic::new_group_loop) {
          c.step = Step::loop_done;  // torch's client reads the ping's answer first
          return;
        }
        // pgroups' sends its first request with the ping (tcp_store.cpp).
        c.step = c.holds(0) ? Step::open : Step::join;
        step(c, turn);
        c.ping_pending = true;
        return;
      case Step::open:
        turn.add(in_attempts(keys::attempt_count()), 1);
        c.step = Step::join_opened;
        return;
      case Step::join_opened:
        require_fresh(count_of(c.answers.at(0)) == kAttempt);
        turn.set(opened, std::to_string(world_));
        join_as_seen(c, turn);
        turn.add(in_attempts(keys::attempt_joined(kAttempt)), c.ranks);
        c.step = Step::wait_full;
        return;
      case Step::wait_full:
        if (count_of(c.answers.at(0)) == world_) turn.set(in_attempts(keys::attempt_full(kAttempt)), "");
        turn.wait({in_attempts(keys::attempt_full(kAttempt))});
        c.step = Step::go;
        return;
      case Step::go:
        turn.set(in_attempts(keys::attempt_verdict(kAttempt)), "go");
        start_agreement(c, turn, kConfigurationRound);
        return;
      case Step::join:
        for (std::int64_t r = c.first; r < c.first + c.ranks; ++r)
          turn.add(in_attempts(keys::attempt_seen(static_cast<int>(r))), 0);
        turn.add(in_attempts(keys::attempt_count()), 0);
        c.step = Step::after_join;
        return;
      case Step::after_join: {
        for (std::size_t r = 0; r + 1 < c.answers.size(); ++r) require_fresh(count_of(c.answers[r]) == 0);
        const std::int64_t attempt = count_of(c.answers.back());
        require_fresh(attempt <= kAttempt);
        turn.wait({opened});  // attempt 1, whether rank 0 opened it yet or not
        c.step = Step::joined;
        return;
      }
      case Step::joined:
        join_as_seen(c, turn);
        turn.add(opened, 0);
        turn.add(in_attempts(keys::attempt_joined(kAttempt)), c.ranks);
        c.step = Step::wait_verdict;
        return;
      case Step::wait_verdict:
        if (count_of(c.answers.at(1)) == count_of(c.answers.at(0)))
          turn.set(in_attempts(keys::attempt_full(kAttempt)), "");
        turn.wait({in_attempts(keys::attempt_verdict(kAttempt))});
        c.step = Step::attempt_get;
        return;
      case Step::attempt_get:
        turn.get(in_attempts(keys::attempt_verdict(kAttempt)));
        c.step = Step::attempt_done;
        return;
      case Step::attempt_done:
        require_fresh(c.answers.at(0) == "go");
        start_agreement(c, turn, kConfigurationRound);
        return;
      default: step_after_attempt(c, turn);
    }
  }

  void step_after_attempt(Client& c, Turn& turn) {
    switch (c.step) {
      case Step::agree_counts:
        if (count_of(c.answers.at(1)) == world_) {
          turn.add(same_key(c.round), 0);
          c.step = Step::agree_last;
        } else {
          turn.wait({in_attempt(keys::bootstrap_agree_verdict(c.round))});
          c.step = Step::agree_get;
        }
        return;
      case Step::agree_last:
        turn.set(in_attempt(keys::bootstrap_agree_verdict(c.round)),
                 count_of(c.answers.at(0)) == world_ ? "same" : "different");
        if (c.reads.empty()) {
          after_agreement(c, turn);
          return;
        }
        turn.multi_get(c.reads);  // every rank has come: every share is in
        c.step = Step::agree_read;
        return;
      case Step::agree_get: {
        // The verdict, and the exchange's keys with it (env_bootstrap.cpp, exchange_and_agree).
        std::vector<std::string> wanted = c.reads;
        wanted.push_back(in_attempt(keys::bootstrap_agree_verdict(c.round)));
        turn.multi_get(wanted);
        c.step = Step::agree_done;
        return;
      }
      case Step::agree_done:
        if (c.answers.back() != "same") {
          throw BackendError(fmt::format("store emulation: the agreement of round {} found differing ranks", c.round));
        }
        after_agreement(c, turn);
        return;
      case Step::agree_read: after_agreement(c, turn); return;
      case Step::loop_count:
        for (std::int64_t r = 0; r < c.ranks; ++r) turn.add(loop_key(c.loop_group), 0);
        c.step = Step::loop_wait;
        return;
      case Step::loop_wait: {
        const bool last = std::any_of(c.answers.begin(), c.answers.end(),
                                      [&](const std::string& answer) { return count_of(answer) == world_; });
        if (last) turn.set(loop_key(c.loop_group) + ":last_worker", "1");
        for (std::int64_t r = 0; r < c.ranks; ++r) turn.wait({loop_key(c.loop_group) + ":last_worker"});
        c.step = Step::loop_done;
        ++c.loop_group;
        return;
      }
      case Step::loop_done:
        if (c.loop_group == loop_groups()) {
          c.step = Step::done;
          return;
        }
        for (std::int64_t r = 0; r < c.ranks; ++r) turn.add(loop_key(c.loop_group), 1);
        c.step = Step::loop_count;
        return;
      default: return;
    }
  }

  // Every rank of this client writes its bytes under its gather key and adds to its
  // digest's count and to the ranks come: one counter add for the client's ranks together.
  void start_agreement(Client& c, Turn& turn, std::uint64_t round) {
    c.round = round;
    for (std::int64_t r = c.first; r < c.first + c.ranks; ++r)
      turn.set(in_attempt(keys::bootstrap_gather(round, static_cast<int>(r))), record_);
    turn.add(same_key(round), c.ranks);
    turn.add(in_attempt(keys::bootstrap_agree_arrived(round)), c.ranks);
    c.step = Step::agree_counts;
  }

  void after_agreement(Client& c, Turn& turn) {
    c.reads.clear();
    if (c.round == kConfigurationRound) {
      start_exchange(c, turn);
      return;
    }
    for (std::int64_t r = c.first; r < c.first + c.ranks; ++r)
      turn.set(in_attempt(keys::bootstrap_left(static_cast<int>(r))), "");
    c.step = Step::done;
  }

  // What the client's ranks send their peers on other clients, with the agreement on
  // their preparation; the keys they read come with its verdict.
  void start_exchange(Client& c, Turn& turn) {
    std::vector<std::pair<std::string, std::string>> sent;
    for (std::int64_t rank = c.first; rank < c.first + c.ranks; ++rank) {
      for (std::size_t kind = 0; kind < sharing_.size(); ++kind) {
        const CommSource source = sharing_[kind].source;
        if (source != CommSource::own && source != CommSource::world) continue;
        if (source == CommSource::world && world_kind_done(kind)) continue;
        share_group(c, rank, kind, sent);
      }
    }
    turn.multi_set(sent);
    start_agreement(c, turn, kPreparationRound);
  }

  // The world's communicator is made once, by the first kind that uses it.
  [[nodiscard]] bool world_kind_done(std::size_t kind) const {
    for (std::size_t before = 0; before < kind; ++before)
      if (sharing_[before].source == CommSource::world) return true;
    return false;
  }

  void share_group(Client& c, std::int64_t rank, std::size_t kind,
                   std::vector<std::pair<std::string, std::string>>& sent) {
    if (sharing_[kind].source != CommSource::world && !layout_.is_member(rank, kind)) return;  // a partial kind
    const std::vector<std::int64_t> members =
        sharing_[kind].source == CommSource::world ? std::vector<std::int64_t>{} : layout_.group_of(rank, kind);
    const std::int64_t size = members.empty() ? world_ : static_cast<std::int64_t>(members.size());
    if (size < 2) return;
    const auto member = [&](std::int64_t position) { return members.empty() ? position : members[position]; };
    const std::int64_t mine = members.empty() ? rank : layout_.local_rank(rank, kind);
    const std::string name = fmt::format("{}.{}", kind, member(0));
    if (options_.traffic == EmulatedTraffic::nccl) {
      // The group's first member publishes its id once; the others read it.
      const std::string key = in_attempt(fmt::format("bootstrap/id/{}/{}", kExchangeRound, name));
      bool others_elsewhere = false;
      for (std::int64_t p = 1; p < size; ++p) others_elsewhere = others_elsewhere || !c.holds(member(p));
      if (mine == 0 && others_elsewhere) sent.emplace_back(key, std::string(kNcclIdBytes, 'n'));
      if (mine != 0 && !c.holds(member(0))) c.reads.push_back(key);
      return;
    }
    for (std::int64_t p = 0; p < size; ++p) {
      if (p == mine || c.holds(member(p))) continue;  // a relay keeps its own ranks' pairs local
      const auto from = static_cast<std::size_t>(mine);
      const auto to = static_cast<std::size_t>(p);
      sent.emplace_back(in_attempt(keys::bootstrap_share(kExchangeRound, name, from, to)),
                        std::string(kCompactAddressBytes, 'a'));
      c.reads.push_back(in_attempt(keys::bootstrap_share(kExchangeRound, name, to, from)));
    }
  }

  void join_as_seen(const Client& c, Turn& turn) const {
    for (std::int64_t r = c.first; r < c.first + c.ranks; ++r)
      turn.set(in_attempts(keys::attempt_seen(static_cast<int>(r))), std::to_string(kAttempt));
  }

  [[nodiscard]] std::string same_key(std::uint64_t round) const {
    return in_attempt(keys::bootstrap_agree_same(round, text_digest(record_)));
  }

  [[nodiscard]] static std::string loop_key(std::int64_t group) {
    return fmt::format("default_pg/store_based_barrier_key:{}", group + 1);
  }

  static void require_fresh(bool fresh) {
    if (!fresh) {
      throw ConfigError(
          "store emulation: the store has an attempt already; the emulation plays a job's first start and needs a "
          "store no job used");
    }
  }

  const Layout& layout_;
  const EmulationOptions& options_;
  std::int64_t world_;
  std::vector<KindSharing> sharing_;
  std::string record_;  // what each rank agrees on: the layout's summary stands for the record
};

}  // namespace pgroups::emulation_detail
