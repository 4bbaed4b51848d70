#pragma once
/// \file
/// One NCCL communicator per group kind of a Layout, for the calling rank, indexed as the
/// MPI side is: by the kind's index in Layout::group_kinds(). The world is held as its own
/// member (world()), whatever the kinds are called; a kind whose one group is the world
/// (the presets' `global`) answers with it. Every other kind comes from one ncclCommSplit
/// of the world (colour = the rank's group index, key = its local rank;
/// NCCL_SPLIT_NOCOLOR for a rank outside every group of a partial kind such as Megatron's
/// `embd`), or, without split, from one ncclCommInitRankConfig per group. The lookups by
/// name (a kind's name, or its ParallelMode) answer the same, through the names given.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_mode.hpp"
#include "pgroups/nccl/communicator.hpp"

namespace pgroups::nccl {

/// Broadcasts `bytes` in place from local rank 0 of the caller's group of kind `kind`
/// (its index in Layout::group_kinds()) to the rest of that group (e.g. MPI_Bcast over the
/// kind's MPI communicator). Only the per-group path (no ncclCommSplit) calls it, once
/// per kind other than the world's of which the caller is a member.
using GroupBroadcast = std::function<void(std::size_t kind, std::span<std::byte> bytes)>;

/// The communicators of one rank: the world, and one per group kind it belongs to, in
/// the Layout's creation order. Destruction goes in reverse order, the world last, so
/// every rank destroys in the same order (ncclCommDestroy is an intra-node collective) and
/// children go before the parent whose resources they share. Move-only.
class GroupCommunicators {
 public:
  GroupCommunicators() noexcept = default;
  GroupCommunicators(const GroupCommunicators&) = delete;
  GroupCommunicators& operator=(const GroupCommunicators&) = delete;
  GroupCommunicators(GroupCommunicators&& other) noexcept = default;
  GroupCommunicators& operator=(GroupCommunicators&& other) noexcept;
  ~GroupCommunicators();

  /// The world communicator; StateError when none is held.
  [[nodiscard]] NcclCommunicator& world();
  [[nodiscard]] const NcclCommunicator& world() const;
  [[nodiscard]] bool has_world() const noexcept { return static_cast<bool>(world_); }

  /// Whether kind `kind` (its index in Layout::group_kinds()) is held. O(1).
  [[nodiscard]] bool contains(std::size_t kind) const noexcept;
  /// The kind's communicator: its own, its owner's or the world's. StateError naming the
  /// kind when it is not held. O(1).
  [[nodiscard]] NcclCommunicator& at(std::size_t kind);
  [[nodiscard]] const NcclCommunicator& at(std::size_t kind) const;
  /// Seconds spent creating the kind's own communicator, as given to add(); 0 for a kind
  /// that uses another's or the world's. StateError naming the kind when it is not held.
  [[nodiscard]] double creation_seconds(std::size_t kind) const;
  /// The kinds held, in creation order.
  [[nodiscard]] std::vector<std::size_t> kinds() const;

  /// The same by the kind's name (as given to add() or alias()) or ParallelMode. O(kinds).
  [[nodiscard]] bool contains(std::string_view group) const noexcept;
  [[nodiscard]] bool contains(ParallelMode mode) const noexcept { return contains(mode_name(mode)); }
  [[nodiscard]] NcclCommunicator& at(std::string_view group);
  [[nodiscard]] const NcclCommunicator& at(std::string_view group) const;
  [[nodiscard]] NcclCommunicator& at(ParallelMode mode) { return at(mode_name(mode)); }
  [[nodiscard]] const NcclCommunicator& at(ParallelMode mode) const { return at(mode_name(mode)); }
  [[nodiscard]] double creation_seconds(std::string_view group) const;
  [[nodiscard]] double creation_seconds(ParallelMode mode) const { return creation_seconds(mode_name(mode)); }
  /// The names of the kinds held, in creation order.
  [[nodiscard]] std::vector<std::string> names() const;
  /// The number of kinds held.
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  /// Whether nothing is held, the world included.
  [[nodiscard]] bool empty() const noexcept { return entries_.empty() && !world_; }

  /// Takes the world communicator (StateError when one is held).
  void set_world(NcclCommunicator world);
  /// Appends kind `kind`'s own communicator, under `name` (StateError when the kind, or a
  /// kind of that name, is held).
  void add(std::size_t kind, std::string name, NcclCommunicator comm, double creation_seconds = 0.0);
  /// Makes kind `kind` (not yet held) answer with the communicator of kind `target`
  /// (held), or of the world when `target` is empty: a kind that shares another's
  /// communicator (communicator_sharing). destroy() and abort() free only the target, once.
  void alias(std::size_t kind, std::string name, std::optional<std::size_t> target);
  /// Destroys every communicator in reverse creation order, the world last; on the first
  /// failure, aborts the rest and rethrows. Empty afterwards.
  void destroy();
  /// Aborts every communicator. Never throws. Empty afterwards.
  void abort() noexcept;

 private:
  struct Entry {
    std::size_t kind = 0;
    std::string name;
    NcclCommunicator comm;  // empty for an alias
    double creation_seconds = 0.0;
    bool is_alias = false;
    std::optional<std::size_t> target;  // an alias's kind; empty: the world
  };
  [[nodiscard]] const Entry* find(std::size_t kind) const noexcept;
  [[nodiscard]] const Entry& held(std::size_t kind) const;
  [[nodiscard]] std::size_t kind_named(std::string_view group) const;
  [[nodiscard]] const NcclCommunicator& communicator(const Entry& entry) const;
  void append(Entry entry);
  void destroy_quietly() noexcept;

  NcclCommunicator world_;
  std::vector<Entry> entries_;                      // creation order
  std::vector<std::optional<std::size_t>> where_;  // kind -> its entry
};

/// Creates the communicators of every group kind of `layout` for global rank `rank`,
/// taking ownership of `world` (which must be the world communicator of `layout`: size
/// layout.world_size(), NCCL rank == `rank`) as its world(). Collective over the world:
/// every rank calls it with the same layout and options, and the kinds are created in the
/// same order everywhere; a rank outside every group of a partial kind takes part in
/// that kind's split without getting a communicator.
///
/// The whole plan (every colour, key, group size) is computed and checked before the
/// first collective. Each created communicator is checked to have the layout's group
/// size and local rank. On any failure every communicator created so far and `world`
/// are aborted (so peers blocked in the same step fail instead of hanging) and the error
/// is rethrown: StateError when the per-group path is needed and `group_broadcast` is
/// empty or `world` is empty, ConfigError for a rank outside the layout or a
/// colour/key beyond int, BackendError, TimeoutError (per step, options.timeout), or
/// what `group_broadcast` throws. Complexity: one split (or one init) per kind.
///
/// With `sharing` (communicator_sharing(layout), one entry per kind; empty: none) only the
/// `own` kinds are split (each named after every kind it serves, e.g. "tp,tp-cp", which is
/// also NCCL's commName); a `world` kind (and the layout's world kind, the presets'
/// `global`) answers with the world, a `shared` one with its owner's, and a `singleton` kind gets nothing here (its
/// one-rank communicator is made by the rank alone when asked for). Every rank passes the same sharing.
[[nodiscard]] GroupCommunicators create_group_communicators(NcclCommunicator world, const Layout& layout,
                                                            std::int64_t rank, const CommOptions& options = {},
                                                            const GroupBroadcast& group_broadcast = {},
                                                            std::span<const KindSharing> sharing = {});

}  // namespace pgroups::nccl
