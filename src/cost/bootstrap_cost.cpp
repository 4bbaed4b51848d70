#include "pgroups/cost/bootstrap_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/communicator_sharing.hpp"

namespace pgroups {
namespace {

// The turns and the bytes read of each step of a rank other than 0 (src/launch/): a
// field's length is 8 bytes, a counter 8, a wait's answer 1.
constexpr std::int64_t kConnectTurns = 0;     // validation and a ping, sent with the attempt's first request
constexpr std::int64_t kConnectBytes = 4;     // the ping's answer
constexpr std::int64_t kAttemptTurns = 5;     // two adds, a wait, two adds, a wait, a get
constexpr std::int64_t kAttemptBytes = 44;    // 16 + 1 + 16 + 1 + (8 + "go")
constexpr std::int64_t kAgreementTurns = 3;   // two adds, a wait, a multi_get of the verdict
constexpr std::int64_t kAgreementBytes = 29;  // 16 + 1 + (8 + "same")
// The exchange rides with the agreement on every rank's preparation (exchange_and_agree):
// the shares go out with its adds and come back with its verdict, at no turn or byte of
// their own but the addresses themselves.
constexpr std::int64_t kLeavingTurns = 1;     // a set, no answer
// A peer's compact pair address: its field's length, the kind byte, sockaddr_in, the
// sequence number.
constexpr std::int64_t kBytesPerPeer = 8 + 1 + 16 + 8;
// The requests of a rank other than 0, step by step: validation and ping (2); the attempt:
// two adds, a wait, a set and two adds, a wait, a get (8); the configuration agreement: a
// set, two adds, a wait, a multi_get (5); the exchange with the agreement on every rank's
// preparation: a multi_set, a set, two adds, a wait, a multi_get (6); leaving, a set (1).
constexpr std::int64_t kRequestsPerRank = 2 + 8 + 5 + 6 + 1;
// What each more rank behind one client asks on its own: its last attempt read and set,
// its two gather keys, its leaving.
constexpr std::int64_t kRequestsPerRelayedRank = 5;
// torch's store-based barrier in each new_group call: an add, then a wait or a check.
constexpr std::int64_t kNewGroupRequests = 3;

// a + b, or a * b; ConfigError naming the world where it passes 64 bits.
template <typename Operation>
std::int64_t checked(Operation operation, std::int64_t a, std::int64_t b, const Layout& layout) {
  std::int64_t out = 0;
  if (operation(a, b, &out)) {
    throw ConfigError(
        fmt::format("the bootstrap cost of a world of {} ranks does not fit in 64 bits", layout.world_size()));
  }
  return out;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, const Layout& layout) {
  return checked([](std::int64_t x, std::int64_t y, std::int64_t* out) { return __builtin_add_overflow(x, y, out); }, a,
                 b, layout);
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const Layout& layout) {
  return checked([](std::int64_t x, std::int64_t y, std::int64_t* out) { return __builtin_mul_overflow(x, y, out); }, a,
                 b, layout);
}

}  // namespace

BootstrapCost env_bootstrap_cost(const Layout& layout, std::int64_t ranks_per_client) {
  BootstrapCost cost;
  cost.round_trips_per_rank = kConnectTurns + kAttemptTurns + 2 * kAgreementTurns + kLeavingTurns;
  const std::vector<KindSharing> sharing = communicator_sharing(layout);
  bool world_used = false;
  std::int64_t groups = 0;
  for (std::size_t kind = 0; kind < sharing.size(); ++kind) {
    groups = checked_add(groups, layout.group_count(kind), layout);
    if (sharing[kind].source == CommSource::world) world_used = true;
    if (sharing[kind].source == CommSource::own) {
      cost.peers_per_rank = checked_add(cost.peers_per_rank, layout.group_size(kind) - 1, layout);
    }
  }
  if (world_used) cost.peers_per_rank = checked_add(cost.peers_per_rank, layout.world_size() - 1, layout);
  cost.bytes_read_per_rank = checked_add(kConnectBytes + kAttemptBytes + 2 * kAgreementBytes,
                                         checked_mul(kBytesPerPeer, cost.peers_per_rank, layout), layout);
  cost.new_group_loop_requests_per_rank = checked_mul(kNewGroupRequests, groups, layout);
  cost.requests_per_rank = kRequestsPerRank;
  const auto world = static_cast<double>(layout.world_size());
  const auto per = static_cast<double>(std::max<std::int64_t>(1, ranks_per_client));
  const double clients = std::ceil(world / per);
  cost.store_seconds =
      clients * (static_cast<double>(kRequestsPerRank) + static_cast<double>(kRequestsPerRelayedRank) * (per - 1)) /
      kStoreRequestsPerSecond;
  cost.new_group_loop_seconds =
      world * static_cast<double>(cost.new_group_loop_requests_per_rank) / kStoreRequestsPerSecond;
  return cost;
}

}  // namespace pgroups
