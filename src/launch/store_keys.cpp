#include "pgroups/launch/store_keys.hpp"

#include <fmt/format.h>

namespace pgroups::store_keys {

std::string attempts_prefix() { return "pgroups/attempts/"; }
std::string attempt_count() { return "count"; }
std::string attempt_opened(std::int64_t attempt) { return fmt::format("{}/opened", attempt); }
std::string attempt_joined(std::int64_t attempt) { return fmt::format("{}/joined", attempt); }
std::string attempt_full(std::int64_t attempt) { return fmt::format("{}/full", attempt); }
std::string attempt_verdict(std::int64_t attempt) { return fmt::format("{}/verdict", attempt); }
std::string attempt_seen(int rank) { return fmt::format("seen/{}", rank); }

std::string attempt_prefix(std::int64_t attempt) { return fmt::format("pgroups/attempt{}/", attempt); }

std::string bootstrap_host(int rank) { return fmt::format("bootstrap/host/{}", rank); }
std::string bootstrap_gather(std::uint64_t round, int rank) {
  return fmt::format("bootstrap/gather/{}/{}", round, rank);
}
std::string bootstrap_left(int rank) { return fmt::format("bootstrap/left/{}", rank); }
std::string bootstrap_agree_same(std::uint64_t round, std::uint64_t digest) {
  return fmt::format("bootstrap/agree/{}/same/{:016x}", round, digest);
}
std::string bootstrap_agree_arrived(std::uint64_t round) { return fmt::format("bootstrap/agree/{}/arrived", round); }
std::string bootstrap_agree_verdict(std::uint64_t round) { return fmt::format("bootstrap/agree/{}/verdict", round); }
std::string bootstrap_share(std::uint64_t round, std::string_view group, std::size_t from, std::size_t to) {
  return fmt::format("bootstrap/share/{}/{}/{}/{}", round, group, from, to);
}
std::string bootstrap_barrier_count(std::uint64_t round) { return fmt::format("bootstrap/barrier/{}/count", round); }
std::string bootstrap_barrier_done(std::uint64_t round) { return fmt::format("bootstrap/barrier/{}/done", round); }

std::string generation_prefix(std::int64_t generation) { return fmt::format("pgroups/gen{}/", generation); }
std::string agreement_prefix(std::int64_t generation) { return fmt::format("pgroups/torch/{}/", generation); }

std::string direct_group_name(std::int64_t generation, std::string_view kind, std::int64_t index, std::int64_t rank) {
  if (rank >= 0) return fmt::format("pgroups/{}/{}/single/{}", generation, kind, rank);
  return fmt::format("pgroups/{}/{}/{}", generation, kind, index);
}

std::string local_group_name(std::int64_t generation, std::string_view kind, std::int64_t index, std::int64_t rank) {
  if (rank >= 0) return fmt::format("pgroups_{}_{}_r{}", generation, kind, rank);
  return fmt::format("pgroups_{}_{}_{}", generation, kind, index);
}

std::string recovery_prefix() { return "pgroups/recovery/"; }
std::string recovery_heartbeat(std::int64_t identity) {
  return fmt::format("{}heartbeat/{}", recovery_prefix(), identity);
}
std::string recovery_round_prefix(std::int64_t generation) {
  return fmt::format("{}{}/", recovery_prefix(), generation);
}

}  // namespace pgroups::store_keys
