// DeviceGroups in a build with the NCCL backend (CMake compiles this file when
// pgroups::nccl exists, device_groups_none.cpp otherwise).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>
#include <span>
#include <string>
#include <utility>

#include "device_groups.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/backend.hpp"
#include "pgroups/nccl/communicator.hpp"
#include "pgroups/nccl/device.hpp"
#include "pgroups/nccl/group_communicators.hpp"
#include "pgroups/nccl/verify.hpp"

namespace pgroups::detail {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

struct DeviceGroups::Communicators {
  nccl::GroupCommunicators groups;
};

DeviceGroups::DeviceGroups(int device, double bind_seconds) : device_(device), bind_seconds_(bind_seconds) {}

DeviceGroups::~DeviceGroups() {
  try {
    destroy();
  } catch (...) {  // NOLINT(bugprone-empty-catch): destroy() aborted what it could not destroy
  }
}

std::unique_ptr<DeviceGroups> DeviceGroups::bind(const AgreeOnSuccess& agree, std::optional<std::int64_t> device,
                                                 std::int64_t node_local_rank) {
  const auto start = Clock::now();
  std::exception_ptr failure;
  int chosen = 0;
  try {
    // The clear errors first: no device at all.
    require_backend_usable(Backend::nccl);
    if (device && (*device < 0 || *device > INT_MAX)) {
      throw ConfigError(fmt::format("device {} is invalid: a CUDA device ordinal is in [0, {}]", *device, INT_MAX));
    }
    // In a context the node-local rank always comes from an MPI shared-memory split, so
    // choose_device never falls back to the launchers' environment variables: the split
    // counts the processes actually on the node.
    nccl::DeviceRequest request;
    if (device) request.device = static_cast<int>(*device);
    request.node_local_rank = node_local_rank;
    nccl::DeviceChoice choice = nccl::bind_device(request);
    chosen = choice.device;
  } catch (...) {
    failure = std::current_exception();
  }
  agree(failure, "binding a CUDA device for the NCCL backend");
  return std::unique_ptr<DeviceGroups>(new DeviceGroups(chosen, seconds_since(start)));
}

void DeviceGroups::create(const Layout& layout, std::int64_t rank, const WorldBroadcast& world_broadcast,
                          const KindBroadcast& kind_broadcast, std::optional<std::chrono::milliseconds> timeout,
                          std::vector<KindSharing> sharing) {
  if (comms_) throw StateError("the NCCL communicators of this context were already created");
  nccl::CommOptions options;
  if (timeout) options.timeout = *timeout;
  const auto start = Clock::now();
  nccl::NcclCommunicator world = nccl::create_world(layout.world_size(), rank, world_broadcast, options);
  world_seconds_ = seconds_since(start);
  auto created = std::make_unique<Communicators>();
  created->groups = nccl::create_group_communicators(std::move(world), layout, rank, options, kind_broadcast, sharing);
  timeout_ = timeout;
  lazy_singletons_.clear();
  kind_names_.clear();
  for (const GroupKind& kind : layout.group_kinds()) kind_names_.push_back(kind.name);
  world_kind_ = layout.world_kind();
  for (std::size_t kind = 0; kind < sharing.size(); ++kind) {
    if (sharing[kind].source == CommSource::singleton && layout.is_member(rank, kind)) {
      lazy_singletons_.push_back(kind);
    }
  }
  comms_ = std::move(created);
}

bool DeviceGroups::is_lazy_singleton(std::size_t kind) const {
  return std::find(lazy_singletons_.begin(), lazy_singletons_.end(), kind) != lazy_singletons_.end();
}

ncclComm_t DeviceGroups::comm(std::size_t kind) const {
  if (!comms_) {
    const std::string name = kind < kind_names_.size() ? kind_names_[kind] : std::to_string(kind);
    throw StateError(fmt::format("there is no NCCL communicator for group {}: they were destroyed", name));
  }
  if (!comms_->groups.contains(kind) && is_lazy_singleton(kind)) {
    // Every one-rank kind of this rank uses one communicator of this rank alone: the first
    // asked for makes it, the others alias it.
    for (const std::size_t other : lazy_singletons_) {
      if (other != kind && comms_->groups.contains(other)) {
        comms_->groups.alias(kind, kind_names_[kind], other);
        return comms_->groups.at(kind).get();
      }
    }
    // A communicator of this rank alone: its unique id needs no broadcast. It costs device
    // memory (about 512 MiB, docs/developing/performance.md), hence only when asked for.
    nccl::CommOptions options;
    if (timeout_) options.timeout = *timeout_;
    nccl::DeviceRequest request;
    request.device = device_;
    (void)nccl::bind_device(request);  // the thread asking may not have the device current
    const auto start = Clock::now();
    nccl::NcclCommunicator one = nccl::init_communicator(kind_names_[kind], 1, 0, [](std::span<std::byte>) {}, options);
    comms_->groups.add(kind, kind_names_[kind], std::move(one), seconds_since(start));
  }
  return comms_->groups.at(kind).get();
}

double DeviceGroups::creation_seconds(std::size_t kind) const noexcept {
  if (!comms_ || !comms_->groups.contains(kind)) return 0.0;
  // create_group_communicators records 0 for the world kind, whose communicator it was handed.
  if (kind == world_kind_) return bind_seconds_ + world_seconds_;
  try {
    return comms_->groups.creation_seconds(kind);
  } catch (...) {
    return 0.0;
  }
}

void DeviceGroups::destroy() {
  if (!comms_) return;
  // Taken out first, so that a failure still leaves nothing held.
  const std::unique_ptr<Communicators> held = std::move(comms_);
  held->groups.destroy();
}

std::vector<GroupCheck> DeviceGroups::check(const Layout& layout, std::int64_t rank) {
  if (!comms_) throw StateError("the NCCL communicators of this context were destroyed; nothing to check");
  try {
    return nccl::verify_rank_sums(comms_->groups, layout, rank);
  } catch (...) {
    // The failed communicator was aborted; its splitShare siblings go with it (see create).
    const std::unique_ptr<Communicators> held = std::move(comms_);
    held->groups.abort();
    throw;
  }
}

}  // namespace pgroups::detail
