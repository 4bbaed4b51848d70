#pragma once
/// \file
/// The environment bootstrap: the rank, the world and the node from the variables torchrun
/// and Kubernetes' training operators set (read_env_launch, pgroups/launch/env_launch.hpp;
/// without LOCAL_RANK and LOCAL_WORLD_SIZE, the node is the ranks of this host name), and
/// the collectives over the TCP store at MASTER_ADDR:MASTER_PORT
/// (pgroups/launch/tcp_store.hpp), whose keys each rank writes under the prefix of the
/// attempt every rank agreed on (agree_on_attempt, pgroups/launch/attempt.hpp), so that
/// neither torchrun's restarts nor an elastic round of another size read an earlier one's
/// keys, whatever each agent's restart count.
/// No MPI and no PMIx in the process.
///
/// Who serves the store follows TORCHELASTIC_USE_AGENT_STORE, not the launcher's name:
/// with it (torchrun's agent holds the store) every rank is a client; without it (a plain
/// launch, Kubernetes' operators) rank 0 serves it (TcpStoreServer) on MASTER_PORT, and
/// keeps serving until every rank's bootstrap is gone (at most the timeout after its own;
/// kStoreServingWhenUnlimited when the timeout is none).

#include <chrono>
#include <memory>

#include "pgroups/common/environment.hpp"
#include "pgroups/launch/bootstrap.hpp"

namespace pgroups {

/// This process's environment bootstrap, connected to the store (waiting at most
/// `timeout`, zero: no limit, for it to be up). ConfigError naming the variable and the
/// rule for a missing or malformed variable (read_env_launch); BackendError when rank 0 cannot serve on the port
/// (already in use), or when the store cannot be reached within the timeout or is no TCP store.
[[nodiscard]] std::unique_ptr<Bootstrap> make_env_bootstrap(std::chrono::milliseconds timeout,
                                                            const EnvironmentLookup& lookup = process_environment);

}  // namespace pgroups
