#pragma once
/// \file
/// A job's store traffic from one process, at a scale this machine cannot run as processes:
/// one thread plays every rank of a layout against a real store server (pgroups' own, or
/// any server of torch's protocol such as torch's TCPStore) over non-blocking sockets,
/// request for request as the env bootstrap's ranks make them when they create the groups
/// (src/launch/env_bootstrap.cpp, attempt.cpp, src/gloo/gloo_groups.cpp), but with no gloo
/// or NCCL connection: what is measured is the store and the protocol.
///
/// A rank's conversation, on a store that no attempt used before: connecting (torch's
/// validation and a ping), the agreement on the attempt, the configuration agreement by
/// counters, the exchange among members, the agreement on every rank's preparation, and
/// leaving. What the exchange carries is the traffic's choice: gloo's compact pair address
/// for each peer of each group, or NCCL's unique id, one per group, which the group's
/// first member publishes and the others read (the store side of initialising each group
/// from its own id). Beside it, torch's new_group loop as Megatron calls it: every rank
/// enters every group's store-based barrier, in order.
///
/// A client can stand for several consecutive ranks (a node relay): it sends its ranks'
/// requests together, adds a counter once for all of them, and keeps what its ranks say
/// to one another off the store.

#include <chrono>
#include <cstdint>
#include <string>

#include "pgroups/layout/layout.hpp"

namespace pgroups {

enum class EmulatedTraffic {
  gloo,            ///< the env bootstrap's creation on the gloo backend
  nccl,            ///< the same with one NCCL id per group instead of the pairs' addresses
  new_group_loop,  ///< torch's new_group for every group, every rank (the store-based barrier)
};

struct EmulationOptions {
  EmulatedTraffic traffic = EmulatedTraffic::gloo;
  /// Consecutive ranks behind one store client (a node relay); 1: a client per rank.
  std::int64_t ranks_per_client = 1;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  /// Longest time with no answer from the store before TimeoutError.
  std::chrono::milliseconds silence_limit{120000};
  /// new_group_loop only: the groups emulated, the first ones of the layout's kinds in
  /// order (0: every group); the rest can be extrapolated, the loop's cost being per group.
  std::int64_t loop_groups = 0;
};

/// What the store saw. Per connection: divide by ranks_per_client for a rank's share.
struct EmulationResult {
  std::int64_t ranks = 0;
  std::int64_t connections = 0;
  std::int64_t ranks_per_client = 1;
  /// From the first connection's start to the last connection's last request.
  double seconds = 0;
  /// Turns of a connection's conversation (a request after an answer starts one), the most.
  std::int64_t most_round_trips = 0;
  double median_round_trips = 0;
  std::int64_t most_bytes_read = 0;
  double median_bytes_read = 0;
  std::int64_t requests = 0;
  std::int64_t bytes_sent = 0;  ///< by every connection, to the store
  std::int64_t bytes_read = 0;  ///< by every connection, from the store
  /// new_group_loop: the groups emulated, and the layout's groups in all.
  std::int64_t groups_emulated = 0;
  std::int64_t groups = 0;
};

/// Emulates `layout`'s creation traffic. ConfigError for options that cannot be
/// (ranks_per_client outside [1, world], more clients than this process may open: the
/// message names the limit); BackendError when the store refuses or drops a connection;
/// TimeoutError past silence_limit. The store must be fresh (no attempt in it yet).
[[nodiscard]] EmulationResult emulate_store_traffic(const Layout& layout, const EmulationOptions& options);

/// Raises this process's open-file limit to its hard limit; returns the limit in effect.
std::int64_t raise_open_file_limit();

}  // namespace pgroups
