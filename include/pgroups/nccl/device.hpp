#pragma once
/// \file
/// Which GPU a rank uses, and binding it (cudaSetDevice) before any NCCL communicator is
/// created. The choice is a pure function of the request, the environment and the
/// number of visible devices, so it is testable without a GPU.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "pgroups/common/environment.hpp"

namespace pgroups::nccl {

/// What the caller knows about the rank's device.
struct DeviceRequest {
  /// An explicit device id (e.g. from --device); used as is, never wrapped.
  std::optional<int> device = std::nullopt;
  /// The rank's index among the processes on its node, from an MPI shared-memory split
  /// (see node_local_rank in mpi_bootstrap.hpp).
  std::optional<std::int64_t> node_local_rank = std::nullopt;
  /// The global rank: the last resort, as Colossal-AI binds `global_rank % devices`.
  std::optional<std::int64_t> global_rank = std::nullopt;
};

/// A chosen device and where the choice came from, e.g. "LOCAL_RANK=5 modulo 4 visible
/// devices", for logs and error messages.
struct DeviceChoice {
  int device = 0;
  std::string source;
};

/// Reads an environment variable; empty optional when unset (pgroups::EnvironmentLookup).
using EnvLookup = EnvironmentLookup;

/// The process environment (pgroups::process_environment).
[[nodiscard]] std::optional<std::string> process_env(std::string_view name);

/// Chooses the device, first rule that applies:
/// 1. request.device: must be in [0, visible_devices), else ConfigError;
/// 2. request.node_local_rank, modulo visible_devices: an MPI shared-memory split counts
///    the processes actually on the node, so it wins over variables a launcher may have
///    left in the environment (e.g. SLURM_LOCALID=0 inherited by every rank of an
///    mpiexec run inside a batch step);
/// 3. the first local-rank variable of launcher_variables() (pgroups/launch/launcher.hpp, the
///    one list) that is set and non-empty, modulo visible_devices;
///    read by environment_count (pgroups/common/environment.hpp): a malformed value is
///    a ConfigError with its message, naming the variable, the value and the rule;
/// 4. request.global_rank modulo visible_devices;
/// 5. device 0.
/// Throws BackendError when visible_devices < 1 (nothing to bind to) and ConfigError for
/// a negative rank in the request.
[[nodiscard]] DeviceChoice choose_device(const DeviceRequest& request, int visible_devices,
                                         const EnvLookup& env = process_env);

/// The number of CUDA devices visible to this process; 0, never an exception, when
/// there is no driver, no device, or CUDA_VISIBLE_DEVICES hides them all.
[[nodiscard]] int visible_gpu_count() noexcept;

/// choose_device with visible_gpu_count() and the process environment, then
/// cudaSetDevice. Returns the choice. Throws as choose_device does, and BackendError
/// when cudaSetDevice fails.
DeviceChoice bind_device(const DeviceRequest& request);

}  // namespace pgroups::nccl
