#include "pgroups/nccl/device.hpp"

#include <fmt/format.h>

#include "check.hpp"
#include "pgroups/common/environment.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/launch/launcher.hpp"

namespace pgroups::nccl {
namespace {

int wrap(std::int64_t rank, int visible_devices) { return static_cast<int>(rank % visible_devices); }

}  // namespace

std::optional<std::string> process_env(std::string_view name) { return process_environment(name); }

DeviceChoice choose_device(const DeviceRequest& request, int visible_devices, const EnvLookup& env) {
  if (visible_devices < 1) {
    throw BackendError(fmt::format("no device to bind to: {} CUDA devices are visible", visible_devices));
  }
  if (request.device) {
    const int device = *request.device;
    if (device < 0 || device >= visible_devices) {
      throw ConfigError(fmt::format("device {} was requested, but the visible CUDA devices are 0 to {}", device,
                                    visible_devices - 1));
    }
    return {device, fmt::format("explicit device {}", device)};
  }
  if (request.node_local_rank) {
    const std::int64_t local = *request.node_local_rank;
    if (local < 0) throw ConfigError(fmt::format("node-local rank {} is invalid: it must be >= 0", local));
    return {
        wrap(local, visible_devices),
        fmt::format("node-local rank {} (MPI shared-memory split) modulo {} visible devices", local, visible_devices)};
  }
  if (env) {
    for (const LauncherVariables& launcher : launcher_variables()) {
      const std::string_view variable = launcher.local_rank;
      const EnvironmentCount local = environment_count(env, variable);
      if (local.malformed()) throw ConfigError(local.problem);
      if (!local.value) continue;
      return {wrap(*local.value, visible_devices),
              fmt::format("{}={} modulo {} visible devices", variable, *local.value, visible_devices)};
    }
  }
  if (request.global_rank) {
    const std::int64_t global = *request.global_rank;
    if (global < 0) throw ConfigError(fmt::format("global rank {} is invalid: it must be >= 0", global));
    return {wrap(global, visible_devices),
            fmt::format("global rank {} modulo {} visible devices", global, visible_devices)};
  }
  return {0, "device 0 (no device, local rank or global rank given)"};
}

int visible_gpu_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    // No driver, no device, or all hidden: "none visible", and the failure is not
    // left behind as the thread's last CUDA error.
    (void)cudaGetLastError();
    return 0;
  }
  return count > 0 ? count : 0;
}

DeviceChoice bind_device(const DeviceRequest& request) {
  int count = 0;
  const cudaError_t counted = cudaGetDeviceCount(&count);
  if (counted != cudaSuccess || count < 1) {
    (void)cudaGetLastError();
    throw BackendError(fmt::format("no CUDA device is visible to this process ({})",
                                   counted != cudaSuccess ? detail::cuda_error_message("cudaGetDeviceCount", counted)
                                                          : std::string("cudaGetDeviceCount returned 0")));
  }
  DeviceChoice choice = choose_device(request, count);
  detail::check_cuda(cudaSetDevice(choice.device),
                     fmt::format("cudaSetDevice({}) for {}", choice.device, choice.source));
  return choice;
}

}  // namespace pgroups::nccl
