#pragma once
/// \file
/// The one reader of an environment launch: the variables torchrun, Kubernetes' training
/// operators and a launch by hand give every process (RANK, WORLD_SIZE, MASTER_ADDR,
/// MASTER_PORT; LOCAL_RANK and LOCAL_WORLD_SIZE where the launcher knows the node;
/// TORCHELASTIC_USE_AGENT_STORE and TORCHELASTIC_RESTART_COUNT under torchrun). It answers
/// both questions asked of them, by one rule: whether this process is an environment
/// launch (choose_bootstrap's `auto`), and what the env bootstrap reads
/// (make_env_bootstrap). Pure: reads only through the EnvironmentLookup it is given.

#include <cstdint>
#include <optional>
#include <string>

#include "pgroups/common/environment.hpp"

namespace pgroups {

/// The variables that make an environment launch, all four set and not empty.
inline constexpr const char* kEnvLaunchVariables[] = {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};

/// Whether `lookup` holds an environment launch: every variable of kEnvLaunchVariables is
/// set (their values are checked by read_env_launch, which a launch so detected reaches).
[[nodiscard]] bool is_env_launch(const EnvironmentLookup& lookup);

/// Whether torchrun's agent started this process (TORCHELASTIC_RUN_ID or
/// TORCHELASTIC_RESTART_COUNT, which it sets for every worker): then torchrun is its
/// launcher, whatever an outer srun or mpirun left in the environment.
[[nodiscard]] bool is_torchrun_worker(const EnvironmentLookup& lookup);

/// What an environment launch says, checked.
struct EnvLaunch {
  int rank = 0;
  int world_size = 1;
  /// This process's index on its node and their number, when LOCAL_RANK and
  /// LOCAL_WORLD_SIZE are both set; nothing otherwise (the env bootstrap then counts the
  /// ranks of each host name).
  std::optional<int> local_rank;
  std::optional<int> local_size;
  std::string store_host;  // MASTER_ADDR
  std::uint16_t store_port = 0;
  /// TORCHELASTIC_USE_AGENT_STORE: torchrun's agent serves the store (else rank 0 does).
  bool agent_serves_store = false;
  /// TORCHELASTIC_RESTART_COUNT, 0 when unset: checked, but not the attempt's identity,
  /// which torchrun counts per agent (the ranks agree on it: pgroups/launch/attempt.hpp).
  std::int64_t restart_count = 0;
};

/// The environment launch of `lookup`. ConfigError naming the variable, its value and the
/// rule for one missing or malformed: a count that is no non-negative decimal (64 bits),
/// WORLD_SIZE of 0 or past 2^31 - 1 (a rank is an int everywhere it travels), RANK not
/// below WORLD_SIZE, LOCAL_RANK not below LOCAL_WORLD_SIZE or only one of them set, a
/// LOCAL_WORLD_SIZE above WORLD_SIZE, MASTER_PORT outside 1..65535.
[[nodiscard]] EnvLaunch read_env_launch(const EnvironmentLookup& lookup);

}  // namespace pgroups
