#pragma once
// The device side of a ParallelContext built with the NCCL backend: the CUDA device this
// rank bound and one NCCL communicator per group kind. Internal to pgroups::context. All
// of the context's NCCL knowledge lives behind this header, which includes no NCCL or
// CUDA header, in one of two files that CMake chooses: device_groups_nccl.cpp in a build
// with NCCL, device_groups_none.cpp without (there only bind() is reachable, and it
// throws). parallel_context.cpp compiles the same either way.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/context/group_handle.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/layout/group_check.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups::detail {

/// How the ranks agree on a local step's outcome before the next collective
/// (mpi::require_success_everywhere over MPI, its namesake over a bootstrap): returns
/// when no rank failed, else every rank throws.
using AgreeOnSuccess = std::function<void(const std::exception_ptr& local, std::string_view step)>;
/// Rank 0's bytes to every rank of the world (the NCCL world's unique id), and one group's
/// local rank 0's bytes to the group's members (the per-group fallback of NCCL without
/// ncclCommSplit), by kind index; nccl::Broadcast and nccl::GroupBroadcast, spelled here
/// so that this header includes no NCCL one.
using WorldBroadcast = std::function<void(std::span<std::byte> bytes)>;
using KindBroadcast = std::function<void(std::size_t kind, std::span<std::byte> bytes)>;

class DeviceGroups {
 public:
  /// Collective over the world (`agree`): chooses this rank's device (`device` when
  /// given, else `node_local_rank` modulo the visible devices, nccl::choose_device) and
  /// makes it current (cudaSetDevice), then agrees on the outcome with every rank
  /// (`agree`), so that no rank enters an NCCL collective unless
  /// all have a device. When any rank fails, every rank throws: the failed ones their own
  /// error (ConfigError when NCCL is not built or `device` is not visible, BackendError
  /// when no device is visible or cudaSetDevice fails), the others BackendError naming
  /// them. The result holds no communicator yet.
  [[nodiscard]] static std::unique_ptr<DeviceGroups> bind(const AgreeOnSuccess& agree,
                                                          std::optional<std::int64_t> device,
                                                          std::int64_t node_local_rank);

  ~DeviceGroups();
  DeviceGroups(const DeviceGroups&) = delete;
  DeviceGroups& operator=(const DeviceGroups&) = delete;
  DeviceGroups(DeviceGroups&&) = delete;
  DeviceGroups& operator=(DeviceGroups&&) = delete;

  /// Collective over the world whose rank `rank` is: the NCCL world (its unique id sent
  /// by `world_broadcast`), then one ncclCommSplit of it per other group
  /// kind of `layout`, in the layout's creation order (nccl::create_group_communicators). Each
  /// step is bounded by `timeout` (the NCCL layer's default when absent). On failure
  /// every NCCL communicator created so far is aborted, none is held, and the error
  /// (BackendError, TimeoutError, ConfigError) is rethrown; it may be local to this rank.
  /// Precondition: bind() succeeded and nothing was created yet.
  /// With `sharing` (one entry per kind, communicator_sharing) only the `own` kinds are
  /// split; shared and world kinds answer with their owner's / the world's communicator,
  /// one-rank kinds get theirs from comm() when first asked (ncclCommInitRank over this
  /// rank alone: no collective). Every NCCL split is a child of the NCCL world with
  /// splitShare (one family): whenever pgroups aborts one of them (a failed or timed-out
  /// creation, check or destroy), it aborts the whole family, so no sibling is left
  /// sharing the resources of an aborted communicator.
  void create(const Layout& layout, std::int64_t rank, const WorldBroadcast& world_broadcast,
              const KindBroadcast& kind_broadcast, std::optional<std::chrono::milliseconds> timeout,
              std::vector<KindSharing> sharing = {});

  /// The device bound by bind(). Stays valid after destroy().
  [[nodiscard]] int device() const noexcept { return device_; }
  /// How bind() chose it, e.g. "node-local rank 1 (MPI shared-memory split) modulo 2
  /// visible devices".

  /// The NCCL communicator of kind `kind` (its index in Layout::group_kinds(), as the
  /// MPI side keys it); StateError naming the kind when it does not exist. A one-rank
  /// kind's is created here on first use, by this rank alone (on the bound device).
  [[nodiscard]] ncclComm_t comm(std::size_t kind) const;
  /// Seconds spent on the kind's device communicator; for the layout's world kind (the
  /// presets' `global`), binding the device and creating the NCCL world. 0 for a kind
  /// that was not created.
  [[nodiscard]] double creation_seconds(std::size_t kind) const noexcept;

  /// Destroys every NCCL communicator in reverse creation order (finalize, then
  /// destroy; ncclCommDestroy is an intra-node collective). On the first failure the
  /// rest are aborted and the error rethrown. Holds none afterwards; a second call does
  /// nothing.
  void destroy();

  /// Collective over the world: nccl::verify_rank_sums over every kind's communicator.
  [[nodiscard]] std::vector<GroupCheck> check(const Layout& layout, std::int64_t rank);

 private:
  struct Communicators;  // the NCCL layer's GroupCommunicators, in device_groups_nccl.cpp

  DeviceGroups(int device, double bind_seconds);

  [[nodiscard]] bool is_lazy_singleton(std::size_t kind) const;

  int device_ = 0;
  std::optional<std::chrono::milliseconds> timeout_;
  std::vector<std::size_t> lazy_singletons_;  // kinds whose one-rank communicator comm() makes
  std::vector<std::string> kind_names_;       // the layout's, for the communicators' names and messages
  std::optional<std::size_t> world_kind_;     // the layout's world kind, whose seconds include the world's
  double bind_seconds_ = 0.0;
  double world_seconds_ = 0.0;
  std::unique_ptr<Communicators> comms_;
};

}  // namespace pgroups::detail
