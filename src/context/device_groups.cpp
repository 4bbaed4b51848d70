#include "device_groups.hpp"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <exception>
#include <utility>

#include "pgroups/backend.hpp"
#include "pgroups/error.hpp"
#include "pgroups/mpi/outcome.hpp"

#ifdef PGROUPS_HAVE_NCCL
#include "pgroups/nccl/communicator.hpp"
#include "pgroups/nccl/device.hpp"
#include "pgroups/nccl/mode_communicators.hpp"
#include "pgroups/nccl/mpi_bootstrap.hpp"
#include "pgroups/nccl/verify.hpp"
#endif

namespace pgroups::detail {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

#ifndef PGROUPS_HAVE_NCCL
// Unreachable in practice: bind() throws first, so no DeviceGroups exists in such a build.
[[noreturn]] void throw_not_built(std::string_view what) {
  throw StateError(fmt::format("{}: this build of pgroups has no NCCL backend", what));
}
#endif

}  // namespace

#ifdef PGROUPS_HAVE_NCCL
struct DeviceGroups::Communicators {
  nccl::ModeCommunicators modes;
};
#else
struct DeviceGroups::Communicators {};
#endif

DeviceGroups::DeviceGroups(int device, std::string source, double bind_seconds)
    : device_(device), device_source_(std::move(source)), bind_seconds_(bind_seconds) {}

DeviceGroups::~DeviceGroups() {
  try {
    destroy();
  } catch (...) {  // NOLINT(bugprone-empty-catch): destroy() aborted what it could not destroy
  }
}

std::unique_ptr<DeviceGroups> DeviceGroups::bind(const mpi::Communicator& control,
                                                 std::optional<std::int64_t> device,
                                                 std::int64_t node_local_rank) {
  const auto start = Clock::now();
  std::exception_ptr failure;
  int chosen = 0;
  std::string source;
  try {
    // The clear errors first: NCCL not built, no device at all.
    require_backend_usable(Backend::nccl);
    if (device && (*device < 0 || *device > INT_MAX)) {
      throw ConfigError(fmt::format("device {} is invalid: a CUDA device ordinal is in [0, {}]", *device, INT_MAX));
    }
#ifdef PGROUPS_HAVE_NCCL
    // In a context the node-local rank always comes from an MPI shared-memory split, so
    // choose_device never falls back to the launchers' environment variables: the split
    // counts the processes actually on the node.
    nccl::DeviceRequest request;
    if (device) request.device = static_cast<int>(*device);
    request.node_local_rank = node_local_rank;
    nccl::DeviceChoice choice = nccl::bind_device(request);
    chosen = choice.device;
    source = std::move(choice.source);
#else
    (void)node_local_rank;
#endif
  } catch (...) {
    failure = std::current_exception();
  }
  mpi::require_success_everywhere(control, failure, "binding a CUDA device for the NCCL backend");
  return std::unique_ptr<DeviceGroups>(new DeviceGroups(chosen, std::move(source), seconds_since(start)));
}

void DeviceGroups::create(const Layout& layout, std::int64_t rank, const mpi::Communicator& control,
                          const MpiGroupOf& mpi_group_of, std::optional<std::chrono::milliseconds> timeout) {
#ifdef PGROUPS_HAVE_NCCL
  if (comms_) throw StateError("the NCCL communicators of this context were already created");
  nccl::CommOptions options;
  if (timeout) options.timeout = *timeout;
  const auto start = Clock::now();
  nccl::NcclCommunicator world = nccl::create_world(layout.world_size(), rank, nccl::mpi_broadcast(control.get()),
                                                    options);
  world_seconds_ = seconds_since(start);
  // The per-group fallback broadcasts each group's unique id over the mode's MPI
  // communicator, whose rank 0 is the group's local rank 0.
  const nccl::GroupBroadcast broadcast = [&mpi_group_of](ParallelMode mode, std::span<std::byte> bytes) {
    nccl::mpi_broadcast(mpi_group_of(mode))(bytes);
  };
  auto created = std::make_unique<Communicators>();
  created->modes = nccl::create_mode_communicators(std::move(world), layout, rank, options, broadcast);
  comms_ = std::move(created);
#else
  (void)layout;
  (void)rank;
  (void)control;
  (void)mpi_group_of;
  (void)timeout;
  throw_not_built("creating NCCL communicators");
#endif
}

ncclComm_t DeviceGroups::comm(ParallelMode mode) const {
#ifdef PGROUPS_HAVE_NCCL
  if (!comms_) {
    throw StateError(fmt::format("there is no NCCL communicator for mode {}: they were destroyed", mode_name(mode)));
  }
  return comms_->modes.at(mode).get();
#else
  (void)mode;
  throw_not_built("asking for an NCCL communicator");
#endif
}

double DeviceGroups::creation_seconds(ParallelMode mode) const noexcept {
#ifdef PGROUPS_HAVE_NCCL
  if (!comms_ || !comms_->modes.contains(mode)) return 0.0;
  // create_mode_communicators records 0 for `global`, whose communicator it was handed.
  if (mode == ParallelMode::global) return bind_seconds_ + world_seconds_;
  return comms_->modes.creation_seconds(mode);
#else
  (void)mode;
  return 0.0;
#endif
}

void DeviceGroups::destroy() {
  if (!comms_) return;
#ifdef PGROUPS_HAVE_NCCL
  // Taken out first, so that a failure still leaves nothing held.
  const std::unique_ptr<Communicators> held = std::move(comms_);
  held->modes.destroy();
#endif
}

std::vector<DeviceGroupCheck> DeviceGroups::check(const Layout& layout, std::int64_t rank) {
#ifdef PGROUPS_HAVE_NCCL
  if (!comms_) throw StateError("the NCCL communicators of this context were destroyed; nothing to check");
  std::vector<DeviceGroupCheck> checks;
  for (const nccl::RankSumCheck& sum : nccl::verify_rank_sums(comms_->modes, layout, rank)) {
    checks.push_back(DeviceGroupCheck{.mode = sum.mode, .expected = sum.expected, .actual = sum.actual});
  }
  return checks;
#else
  (void)layout;
  (void)rank;
  throw_not_built("checking NCCL communicators");
#endif
}

}  // namespace pgroups::detail
