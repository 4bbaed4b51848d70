#pragma once
/// \file
/// One NCCL communicator per parallel mode of a Layout, for the calling rank: the world
/// serves as `global`, every other mode comes from one ncclCommSplit of the world
/// (colour = Layout::group_index, key = Layout::local_rank), or, without split, from one
/// ncclCommInitRankConfig per group.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "pgroups/layout.hpp"
#include "pgroups/nccl/communicator.hpp"
#include "pgroups/parallel_mode.hpp"

namespace pgroups::nccl {

/// Broadcasts `bytes` in place from local rank 0 of the caller's group in `mode` to the
/// rest of that group (e.g. MPI_Bcast over the mode's MPI communicator). Only the
/// per-group path (no ncclCommSplit) calls it, once per mode other than `global`.
using GroupBroadcast = std::function<void(ParallelMode mode, std::span<std::byte> bytes)>;

/// The communicators of one rank, one per mode, in the Layout's creation order
/// (`global` first). Destruction goes in reverse order, so every rank destroys in the
/// same order (ncclCommDestroy is an intra-node collective) and children go before the
/// parent whose resources they share. Move-only.
class ModeCommunicators {
 public:
  ModeCommunicators() noexcept = default;
  ModeCommunicators(const ModeCommunicators&) = delete;
  ModeCommunicators& operator=(const ModeCommunicators&) = delete;
  ModeCommunicators(ModeCommunicators&& other) noexcept = default;
  ModeCommunicators& operator=(ModeCommunicators&& other) noexcept;
  ~ModeCommunicators();

  [[nodiscard]] bool contains(ParallelMode mode) const noexcept;
  /// Throws StateError naming the mode when it was not created.
  [[nodiscard]] NcclCommunicator& at(ParallelMode mode);
  [[nodiscard]] const NcclCommunicator& at(ParallelMode mode) const;
  /// The modes held, in creation order.
  [[nodiscard]] std::vector<ParallelMode> modes() const;
  [[nodiscard]] std::size_t size() const noexcept { return comms_.size(); }
  [[nodiscard]] bool empty() const noexcept { return comms_.empty(); }

  /// Seconds spent creating the mode's communicator, as given to add() (for `global`,
  /// create_mode_communicators records 0: the world was created before the call).
  /// Throws StateError naming the mode when it was not created.
  [[nodiscard]] double creation_seconds(ParallelMode mode) const;

  /// Appends the communicator of a mode not yet held (StateError otherwise).
  void add(ParallelMode mode, NcclCommunicator comm, double creation_seconds = 0.0);
  /// Destroys every communicator in reverse creation order; on the first failure, aborts
  /// the rest and rethrows. Empty afterwards.
  void destroy();
  /// Aborts every communicator. Never throws. Empty afterwards.
  void abort() noexcept;

 private:
  struct Entry {
    ParallelMode mode;
    NcclCommunicator comm;
    double creation_seconds;
  };
  [[nodiscard]] const Entry& entry(ParallelMode mode) const;
  void destroy_quietly() noexcept;

  std::vector<Entry> comms_;
};

/// Creates the communicators of every mode of `layout` for global rank `rank`, taking
/// ownership of `world` (which must be the world communicator of `layout`: size
/// layout.world_size(), NCCL rank == `rank`) as the `global` mode. Collective over the
/// world: every rank calls it with the same layout and options, and the modes are
/// created in the same order everywhere.
///
/// The whole plan (every colour, key, group size) is computed and checked before the
/// first collective. Each created communicator is checked to have the layout's group
/// size and local rank. On any failure every communicator created so far and `world`
/// are aborted (so peers blocked in the same step fail instead of hanging) and the error
/// is rethrown: StateError when the per-group path is needed and `group_broadcast` is
/// empty or `world` is empty, ConfigError for a rank outside the layout or a
/// colour/key beyond int, BackendError, TimeoutError (per step, options.timeout), or
/// what `group_broadcast` throws. Complexity: one split (or one init) per mode.
[[nodiscard]] ModeCommunicators create_mode_communicators(NcclCommunicator world, const Layout& layout,
                                                          std::int64_t rank, const CommOptions& options = {},
                                                          const GroupBroadcast& group_broadcast = {});

}  // namespace pgroups::nccl
