#pragma once
/// \file
/// What the env bootstrap puts on its one store when a rank creates a layout's groups on
/// the gloo backend, counted from the protocol, not timed: the turns of the rank's
/// conversation with the store (what a counting proxy sees: a request with no answer
/// costs none of its own) and the bytes it reads. docs/developing/scale.md derives each
/// term and holds the measurements (python/bench/store_traffic.py) the model matches.
/// Beside it, a lower bound of what torch's new_group loop puts on the store for the same
/// groups: every rank calls new_group for every group, and each call's store-based barrier
/// is at least three requests.

#include <cstdint>

#include "pgroups/layout/layout.hpp"

namespace pgroups {

struct BootstrapCost {
  /// Turns of one rank's conversation with the store: connecting, the attempt's agreement
  /// (a rank other than 0 that comes after rank 0 opened it), the configuration
  /// agreement, the exchange of addresses, the agreement on every rank's preparation, and
  /// leaving. The same at every world size.
  std::int64_t round_trips_per_rank = 0;
  /// The pair addresses the rank that reads most reads: one per peer of each of its groups
  /// (the world's, where a kind is the whole world).
  std::int64_t peers_per_rank = 0;
  /// The bytes that rank reads: a constant for the agreements, and one compact address
  /// per peer (IPv4).
  std::int64_t bytes_read_per_rank = 0;
  /// torch's new_group loop for the same groups, per rank: at least 3 store requests per
  /// group of every kind, member or not.
  std::int64_t new_group_loop_requests_per_rank = 0;
  /// The requests of one rank's conversation (a request without an answer counts): the
  /// same at every world size, gloo's or NCCL's.
  std::int64_t requests_per_rank = 0;
  /// Seconds of the one store serving every client's requests at kStoreRequestsPerSecond:
  /// the creation's, and the loop's (a lower bound, as its requests are; a client per rank).
  double store_seconds = 0;
  double new_group_loop_seconds = 0;
};

/// The requests a second one store serves, calibrated on this project's machine (2 cores,
/// pgroups' server and the emulation's clients in two processes): 80,000 to 137,000
/// measured by `pgroups bench --emulate` from 1,024 to 131,072 ranks (docs/developing/scale.md).
inline constexpr double kStoreRequestsPerSecond = 110'000;

/// The cost of `layout`'s groups, each kind with its own communicator but where one is
/// shared (communicator_sharing). O(kinds x dimensions); no group is enumerated. Throws
/// ConfigError naming the world size when a count does not fit in 64 bits.
/// `ranks_per_client` consecutive ranks behind each store client (a node relay, as
/// `pgroups bench --emulate --relay` plays it) change the requests and the seconds: a
/// client asks once for its ranks' counters and waits, and once per rank for its keys.
[[nodiscard]] BootstrapCost env_bootstrap_cost(const Layout& layout, std::int64_t ranks_per_client = 1);

}  // namespace pgroups
