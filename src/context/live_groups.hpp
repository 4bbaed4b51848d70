#pragma once
// The communicators of a live ParallelContext, internal to pgroups::context: the world's
// duplicate, one MPI entry per group kind and the NCCL side. A context holds them through
// one pointer, so that its moves are member-wise and a moved-from or destroyed context
// is simply one without them.
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "device_groups.hpp"
#include "mpi_handle.hpp"
#include "pgroups/layout/communicator_sharing.hpp"

namespace gloo {
class Context;
}  // namespace gloo

namespace pgroups::detail {

/// One group kind's communicator, MPI or gloo; indexed by kind in LiveGroups::groups.
struct KindGroup {
  MpiHandle comm;  // null outside every group of a partial kind; borrowed when shared
  // The gloo backend's context (a context built on a bootstrap); shared by the kinds that share it.
  std::shared_ptr<::gloo::Context> gloo;
  KindSharing sharing;
  bool member = true;
  std::int64_t local_rank = 0;
  std::int64_t size = 1;
  double creation_seconds = 0.0;
};

class LiveGroups {
 public:
  /// Holds nothing yet. `timeout`, as resolve_timeout gave it, bounds the teardown (none
  /// when zero); `rank` and `world_size` name this rank in a watchdog's message. Each instance gets an
  /// identity of its own, which the KindHandles made for it carry.
  LiveGroups(std::chrono::milliseconds timeout, std::int64_t rank, std::int64_t world_size);
  /// Frees what is still held, as destroy() does, ignoring errors.
  ~LiveGroups();
  LiveGroups(const LiveGroups&) = delete;
  LiveGroups& operator=(const LiveGroups&) = delete;
  LiveGroups(LiveGroups&&) = delete;
  LiveGroups& operator=(LiveGroups&&) = delete;

  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }

  /// Frees every communicator, the NCCL ones first, then the kinds' in reverse creation
  /// order, then the world, under a watchdog with the timeout. Every one is freed even
  /// if one fails; then the first failure is thrown. Holds nothing afterwards.
  void destroy();

  // The duplicate of the world: `global`'s communicator and every kind's parent.
  MpiHandle world;
  // One entry per group kind of the layout, by kind index. A whole-world kind's entry
  // borrows `world`.
  std::vector<KindGroup> groups;
  // The gloo backend's world (`global`'s context); null on the MPI constructor's path.
  std::shared_ptr<::gloo::Context> gloo_world;
  // The NCCL side (one communicator per kind); null with the MPI backend.
  std::unique_ptr<DeviceGroups> device_groups;

 private:
  [[nodiscard]] bool holds_nothing() const noexcept;
  void destroy_quietly() noexcept;

  std::uint64_t id_;
  std::chrono::milliseconds timeout_;
  int rank_;
  int world_size_;
};

}  // namespace pgroups::detail
