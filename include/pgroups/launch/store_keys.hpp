#pragma once
/// \file
/// Every key pgroups writes in a store, C++ and Python alike (Python binds these as
/// `pgroups._pgroups.store_keys`): one table, so that two users of one store never meet in
/// a key by accident and a key is spelled once.
///
///   pgroups/attempt<R>/              the scope of restart count R (restart_prefix)
///     bootstrap/world/<rank>         what each rank declared as WORLD_SIZE, read only to
///                                    name a mismatch after a timeout (rounds of one count
///                                    meet here)
///   pgroups/attempt<R>/world<W>/     one launcher attempt (attempt_prefix): everything a job
///                                    writes between its start and its end, the env
///                                    bootstrap's keys and pgroups.torch's default group
///     bootstrap/world/<rank>         the env bootstrap's start: each rank's WORLD_SIZE
///     bootstrap/host/<rank>          its start without LOCAL_RANK: each rank's host name
///     bootstrap/gather/<n>/<rank>    its n-th collective (all-gather, barrier)
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
/// The attempt holds the world size beside torchrun's restart count because an elastic
/// round with another number of nodes keeps the count (measured on torch 2.13): without
/// the size, a fast rank of the new round would read the previous round's keys.

#include <cstdint>
#include <string>
#include <string_view>

namespace pgroups::store_keys {

/// "pgroups/attempt<restart_count>/".
[[nodiscard]] std::string restart_prefix(std::int64_t restart_count);
/// "pgroups/attempt<restart_count>/world<world_size>/".
[[nodiscard]] std::string attempt_prefix(std::int64_t restart_count, std::int64_t world_size);

/// The env bootstrap's keys, under the attempt prefix.
[[nodiscard]] std::string bootstrap_world(int rank);
[[nodiscard]] std::string bootstrap_host(int rank);
[[nodiscard]] std::string bootstrap_gather(std::uint64_t round, int rank);
[[nodiscard]] std::string bootstrap_left(int rank);

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
