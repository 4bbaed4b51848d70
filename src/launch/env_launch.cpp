#include "pgroups/launch/env_launch.hpp"

#include <fmt/format.h>

#include <limits>
#include <string_view>

#include "pgroups/common/error.hpp"

namespace pgroups {
namespace {

constexpr std::int64_t kLargestWorld = std::numeric_limits<int>::max();

// A count by the one reader's rule; nothing when unset.
std::optional<std::int64_t> count_of(const EnvironmentLookup& lookup, std::string_view name) {
  const EnvironmentCount count = environment_count(lookup, name);
  if (count.malformed()) throw ConfigError(count.problem);
  return count.value;
}

std::int64_t required_count(const EnvironmentLookup& lookup, std::string_view name, std::string_view why) {
  const std::optional<std::int64_t> value = count_of(lookup, name);
  if (!value) throw ConfigError(fmt::format("the env bootstrap needs {} ({}), which is not set", name, why));
  return *value;
}

bool is_true(const std::optional<std::string>& text) {
  return text && (*text == "True" || *text == "true" || *text == "1");
}

}  // namespace

bool is_torchrun_worker(const EnvironmentLookup& lookup) {
  return environment_text(lookup, "TORCHELASTIC_RUN_ID").has_value() ||
         environment_text(lookup, "TORCHELASTIC_RESTART_COUNT").has_value();
}

bool is_env_launch(const EnvironmentLookup& lookup) {
  for (const char* name : kEnvLaunchVariables) {
    if (!environment_text(lookup, name)) return false;
  }
  return true;
}

EnvLaunch read_env_launch(const EnvironmentLookup& lookup) {
  EnvLaunch launch;
  const std::int64_t world = required_count(lookup, "WORLD_SIZE", "the number of ranks");
  if (world < 1 || world > kLargestWorld) {
    throw ConfigError(fmt::format("WORLD_SIZE {} is no world size: it must be in 1..{}", world, kLargestWorld));
  }
  const std::int64_t rank = required_count(lookup, "RANK", "this process's rank");
  if (rank >= world) {
    throw ConfigError(fmt::format("RANK {} is not below WORLD_SIZE {}: a rank is in 0..WORLD_SIZE-1", rank, world));
  }
  launch.world_size = static_cast<int>(world);
  launch.rank = static_cast<int>(rank);

  const std::optional<std::int64_t> local_rank = count_of(lookup, "LOCAL_RANK");
  const std::optional<std::int64_t> local_size = count_of(lookup, "LOCAL_WORLD_SIZE");
  if (local_rank.has_value() != local_size.has_value()) {
    throw ConfigError(
        fmt::format("{} is set but {} is not: give both (torchrun does) or neither (the env bootstrap "
                    "then counts the ranks of each host)",
                    local_rank ? "LOCAL_RANK" : "LOCAL_WORLD_SIZE", local_rank ? "LOCAL_WORLD_SIZE" : "LOCAL_RANK"));
  }
  if (local_size) {
    if (*local_size < 1 || *local_size > world) {
      throw ConfigError(
          fmt::format("LOCAL_WORLD_SIZE {} is no node size: it must be in 1..WORLD_SIZE ({})", *local_size, world));
    }
    if (*local_rank >= *local_size) {
      throw ConfigError(
          fmt::format("LOCAL_RANK {} is not below LOCAL_WORLD_SIZE {}: a local rank is in 0..LOCAL_WORLD_SIZE-1",
                      *local_rank, *local_size));
    }
    launch.local_rank = static_cast<int>(*local_rank);
    launch.local_size = static_cast<int>(*local_size);
  }

  const std::optional<std::string> host = environment_text(lookup, "MASTER_ADDR");
  if (!host) throw ConfigError("the env bootstrap needs MASTER_ADDR (the TCP store's host), which is not set");
  launch.store_host = *host;
  const std::int64_t port = required_count(lookup, "MASTER_PORT", "the TCP store's port");
  if (port < 1 || port > 65535) {
    throw ConfigError(fmt::format("MASTER_PORT {} is no TCP port: it must be in 1..65535", port));
  }
  launch.store_port = static_cast<std::uint16_t>(port);
  // Who serves follows TORCHELASTIC_USE_AGENT_STORE, not the launcher's name: torchrun's
  // agent, or else rank 0.
  launch.agent_serves_store = is_true(environment_text(lookup, "TORCHELASTIC_USE_AGENT_STORE"));
  launch.restart_count = count_of(lookup, "TORCHELASTIC_RESTART_COUNT").value_or(0);
  return launch;
}

}  // namespace pgroups
