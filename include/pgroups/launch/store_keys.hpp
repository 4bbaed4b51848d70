#pragma once
/// \file
/// Every key pgroups writes in a store, C++ and Python alike (Python binds these as
/// `pgroups._pgroups.store_keys`): one table, so that two users of one store never meet in
/// a key by accident and a key is spelled once.
///
///   pgroups/attempts/                the agreement on the attempt (launch/attempt.hpp):
///     count                          the attempts opened, by each attempt's rank 0
///     <A>/opened                     attempt A is open; rank 0's world size
///     <A>/joined, <A>/full           the ranks that joined it; set once they are all in
///     <A>/verdict                    "go", or "superseded" by the next attempt's rank 0
///     seen/<rank>                    the last attempt a process of this rank joined
///   pgroups/attempt<A>/              one agreed attempt (attempt_prefix): everything a job
///                                    writes between its start and its end, the env
///                                    bootstrap's keys and pgroups.torch's default group
///     bootstrap/host/<rank>          its start without LOCAL_RANK: each rank's host name
///     bootstrap/gather/<n>/<rank>    its n-th collective (all-gather, barrier)
///     bootstrap/barrier/<n>/count, .../done  a barrier's counter, set done by its last rank
///     bootstrap/agree/<n>/same/<digest>, .../arrived, .../verdict  its n-th collective,
///                                    an all-gather unless every rank gave the same bytes:
///                                    the ranks of each digest, the ranks come, and what the
///                                    last rank found (its bytes under bootstrap/gather/<n>)
///     bootstrap/share/<n>/<group>/<i>/<j>  its n-th collective, an exchange among
///                                    members: what the group's i-th member sends its j-th
///     bootstrap/left/<rank>          its end: the rank that serves waits for every one
///   pgroups/gen<G>/                  the default group of recovery generation G (torch)
///   pgroups/torch/<G>/               the torch front's agreement of its G-th call
///   pgroups/<G>/<kind>/<index>/      a gloo group made directly (torch 1.x) in that call
///   pgroups/<G>/<kind>/single/<rank>/  its one-rank groups
///   pgroups_<G>_<kind>_<index>/      a group torch makes with local synchronisation (torch
///   pgroups_<G>_<kind>_r<rank>/      >= 2.2) in that call, and its one-rank groups: torch
///                                    writes a group's keys under the group's name
///   pgroups/recovery/                recovery: heartbeat/<id>, then <generation>/ per round
///
/// The attempt is agreed on through the store, not read from torchrun's restart count:
/// the count is each agent's own (a node restarted for another's failure keeps 0), and an
/// elastic round with another number of nodes keeps it (measured on torch 2.13).

#include <cstdint>
#include <string>
#include <string_view>

namespace pgroups::store_keys {

/// "pgroups/attempts/": the agreement on the attempt (agree_on_attempt), its keys below.
[[nodiscard]] std::string attempts_prefix();
[[nodiscard]] std::string attempt_count();
[[nodiscard]] std::string attempt_opened(std::int64_t attempt);
[[nodiscard]] std::string attempt_joined(std::int64_t attempt);
[[nodiscard]] std::string attempt_full(std::int64_t attempt);
[[nodiscard]] std::string attempt_verdict(std::int64_t attempt);
[[nodiscard]] std::string attempt_seen(int rank);
/// "pgroups/attempt<attempt>/": everything one agreed attempt writes.
[[nodiscard]] std::string attempt_prefix(std::int64_t attempt);

/// The env bootstrap's keys, under the attempt prefix.
[[nodiscard]] std::string bootstrap_host(int rank);
[[nodiscard]] std::string bootstrap_gather(std::uint64_t round, int rank);
[[nodiscard]] std::string bootstrap_left(int rank);
[[nodiscard]] std::string bootstrap_agree_same(std::uint64_t round, std::uint64_t digest);
[[nodiscard]] std::string bootstrap_agree_arrived(std::uint64_t round);
[[nodiscard]] std::string bootstrap_agree_verdict(std::uint64_t round);
[[nodiscard]] std::string bootstrap_share(std::uint64_t round, std::string_view group, std::size_t from,
                                          std::size_t to);
/// A barrier's counter and the key its last rank sets (the round's number, as a gather's).
[[nodiscard]] std::string bootstrap_barrier_count(std::uint64_t round);
[[nodiscard]] std::string bootstrap_barrier_done(std::uint64_t round);

/// "pgroups/gen<generation>/".
[[nodiscard]] std::string generation_prefix(std::int64_t generation);
/// "pgroups/torch/<generation>/".
[[nodiscard]] std::string agreement_prefix(std::int64_t generation);
/// The name of a group that the torch front makes in its `generation`-th call, of kind
/// `kind`: the group's index among the kind's (`rank` < 0) or this rank's one-rank group.
/// torch writes the group's keys under its name and a '/'. Direct (torch 1.x's gloo made
/// by hand): "pgroups/<generation>/<kind>/<index>", ".../single/<rank>"; local (torch's
/// helper with local synchronisation): "pgroups_<generation>_<kind>_<index>", "..._r<rank>".
[[nodiscard]] std::string direct_group_name(std::int64_t generation, std::string_view kind, std::int64_t index,
                                            std::int64_t rank = -1);
[[nodiscard]] std::string local_group_name(std::int64_t generation, std::string_view kind, std::int64_t index,
                                           std::int64_t rank = -1);
/// "pgroups/recovery/".
[[nodiscard]] std::string recovery_prefix();
/// "pgroups/recovery/heartbeat/<identity>".
[[nodiscard]] std::string recovery_heartbeat(std::int64_t identity);
/// "pgroups/recovery/<generation>/".
[[nodiscard]] std::string recovery_round_prefix(std::int64_t generation);

}  // namespace pgroups::store_keys
