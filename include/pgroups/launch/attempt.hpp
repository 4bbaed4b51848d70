#pragma once
/// \file
/// Which attempt of a job this process belongs to, agreed on through the job's store by
/// every rank of the attempt. A launcher's own counter cannot name it: torchrun keeps its
/// restart count per agent, so after one node's failure that node counts 1 and the others,
/// restarted for the new membership, still count 0; and a new round with another number
/// of nodes keeps the count. What every rank of one attempt shares is the store, which
/// outlives the attempts (torchrun's agent serves it), and the launcher's guarantee that a
/// new attempt's processes start only after every process of the last one has ended.
///
/// The protocol (keys under store_keys::attempts_prefix()):
/// - rank 0 opens a new attempt: E = add("count", 1); it marks attempt E - 1, the newest
///   that anyone could have joined before it, "superseded"; it publishes E's world size
///   in "<E>/opened", joins E and, once W ranks have joined, marks E "go";
/// - every other rank r joins the newest attempt it has not joined before (the store
///   remembers, per rank, the last attempt a process of that rank joined: "seen/<r>"),
///   and waits for that attempt's verdict: "go" (it is this attempt) or "superseded" (a
///   dead attempt's, which the new rank 0 ended): then it joins the next.
/// A dead attempt's "go" is never read by a new process: that attempt was full, so every
/// rank joined it, and each rank's next process skips it. The cost is constant per rank
/// (about ten round trips), whatever the world size.

#include <chrono>
#include <cstdint>

#include "pgroups/launch/store.hpp"

namespace pgroups {

/// The attempt this rank belongs to (1, 2, ...), agreed with every rank of it through
/// `store`. Every rank must name the same `world_size`; a rank that names another than
/// rank 0 gets ConfigError naming both. TimeoutError past `timeout` (0: none), naming what
/// was awaited and, for rank 0, the ranks that had not joined.
[[nodiscard]] std::int64_t agree_on_attempt(Store& store, int rank, int world_size, std::chrono::milliseconds timeout);

}  // namespace pgroups
