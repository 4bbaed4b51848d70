#include "pgroups/nccl/device.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "check.hpp"
#include "pgroups/layout/error.hpp"
#include "pgroups/layout/launcher.hpp"

namespace pgroups::nccl {
namespace {

// Strict: decimal digits only, no sign, no spaces, the whole value must be used.
std::int64_t parse_local_rank(std::string_view variable, const std::string& value) {
  std::int64_t parsed = -1;
  const char* first = value.data();
  const char* last = value.data() + value.size();
  const auto [end, error] = std::from_chars(first, last, parsed);
  if (error != std::errc() || end != last || parsed < 0 || value.front() == '-') {
    throw ConfigError(fmt::format("environment variable {}='{}' is not a node-local rank: it must be a non-negative "
                                  "decimal integer",
                                  variable, value));
  }
  return parsed;
}

int wrap(std::int64_t rank, int visible_devices) { return static_cast<int>(rank % visible_devices); }

}  // namespace

std::optional<std::string> process_env(std::string_view name) {
  const std::string key(name);
  const char* value = std::getenv(key.c_str());  // NOLINT(concurrency-mt-unsafe): read-only use
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

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
    return {wrap(local, visible_devices),
            fmt::format("node-local rank {} (MPI shared-memory split) modulo {} visible devices", local,
                        visible_devices)};
  }
  if (env) {
    for (const LauncherVariables& launcher : launcher_variables()) {
      const std::string_view variable = launcher.local_rank;
      const std::optional<std::string> value = env(variable);
      if (!value || value->empty()) continue;
      const std::int64_t local = parse_local_rank(variable, *value);
      return {wrap(local, visible_devices),
              fmt::format("{}={} modulo {} visible devices", variable, *value, visible_devices)};
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
    throw BackendError(fmt::format(
        "no CUDA device is visible to this process ({})",
        counted != cudaSuccess ? detail::cuda_error_message("cudaGetDeviceCount", counted)
                               : std::string("cudaGetDeviceCount returned 0")));
  }
  DeviceChoice choice = choose_device(request, count);
  detail::check_cuda(cudaSetDevice(choice.device), fmt::format("cudaSetDevice({}) for {}", choice.device,
                                                               choice.source));
  return choice;
}

}  // namespace pgroups::nccl
