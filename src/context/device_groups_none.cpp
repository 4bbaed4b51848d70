// DeviceGroups in a build without the NCCL backend (CMake compiles this file when
// pgroups::nccl does not exist, device_groups_nccl.cpp otherwise): bind() fails on every
// rank alike, so no DeviceGroups is ever made and the other members are unreachable.
#include <fmt/format.h>

#include <exception>

#include "device_groups.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/backend.hpp"

namespace pgroups::detail {
namespace {

[[noreturn]] void throw_not_built(std::string_view what) {
  throw StateError(fmt::format("{}: this build of pgroups has no NCCL backend", what));
}

}  // namespace

struct DeviceGroups::Communicators {};

DeviceGroups::DeviceGroups(int device, double bind_seconds) : device_(device), bind_seconds_(bind_seconds) {}

DeviceGroups::~DeviceGroups() = default;

std::unique_ptr<DeviceGroups> DeviceGroups::bind(const AgreeOnSuccess& agree, std::optional<std::int64_t> /*device*/,
                                                 std::int64_t /*node_local_rank*/) {
  std::exception_ptr failure;
  try {
    require_backend_usable(Backend::nccl);  // ConfigError: NCCL was not built
    throw_not_built("binding a CUDA device");
  } catch (...) {
    failure = std::current_exception();
  }
  agree(failure, "binding a CUDA device for the NCCL backend");
  throw_not_built("binding a CUDA device");  // unreachable: the agreement rethrows
}

void DeviceGroups::create(const Layout& /*layout*/, std::int64_t /*rank*/, const WorldBroadcast& /*world_broadcast*/,
                          const KindBroadcast& /*kind_broadcast*/, std::optional<std::chrono::milliseconds> /*timeout*/,
                          std::vector<KindSharing> /*sharing*/) {
  throw_not_built("creating NCCL communicators");
}

ncclComm_t DeviceGroups::comm(std::size_t /*kind*/) const { throw_not_built("asking for an NCCL communicator"); }

bool DeviceGroups::is_lazy_singleton(std::size_t /*kind*/) const { return false; }

double DeviceGroups::creation_seconds(std::size_t /*kind*/) const noexcept { return 0.0; }

void DeviceGroups::destroy() {}

std::vector<GroupCheck> DeviceGroups::check(const Layout& /*layout*/, std::int64_t /*rank*/) {
  throw_not_built("checking NCCL communicators");
}

}  // namespace pgroups::detail
