#include "pgroups/launch/store_keys.hpp"

#include <fmt/format.h>

namespace pgroups::store_keys {

std::string restart_prefix(std::int64_t restart_count) { return fmt::format("pgroups/attempt{}/", restart_count); }

std::string attempt_prefix(std::int64_t restart_count, std::int64_t world_size) {
  return fmt::format("{}world{}/", restart_prefix(restart_count), world_size);
}

std::string bootstrap_world(int rank) { return fmt::format("bootstrap/world/{}", rank); }
std::string bootstrap_host(int rank) { return fmt::format("bootstrap/host/{}", rank); }
std::string bootstrap_gather(std::uint64_t round, int rank) {
  return fmt::format("bootstrap/gather/{}/{}", round, rank);
}
std::string bootstrap_left(int rank) { return fmt::format("bootstrap/left/{}", rank); }

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
