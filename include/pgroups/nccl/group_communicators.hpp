#pragma once
/// \file
/// One NCCL communicator per group kind of a Layout, for the calling rank: the world
/// serves as `global` (under world_key(layout): "global" where the layout's global kind
/// is the world, kWorldKey otherwise, so that a mesh dimension may be called "global"), every
/// other kind comes from one ncclCommSplit of the world (colour = the rank's group index,
/// key = its local rank; NCCL_SPLIT_NOCOLOR for a rank outside every group of a partial
/// kind such as Megatron's `embd`), or, without split, from one ncclCommInitRankConfig
/// per group.

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

/// The key of the world communicator in a layout without a global kind (a mesh): no
/// group token can be it, since '(' is in no dimension name.
inline constexpr std::string_view kWorldKey = "(world)";

/// The key create_group_communicators stores the world under: the name of the layout's
/// world kind (Layout::world_kind, the presets' "global") when it has one, else
/// kWorldKey. O(1).
[[nodiscard]] inline std::string_view world_key(const Layout& layout) {
  const std::optional<std::size_t> world = layout.world_kind();
  return world ? std::string_view(layout.group_kinds()[*world].name) : kWorldKey;
}

/// Broadcasts `bytes` in place from local rank 0 of the caller's group of kind `group`
/// to the rest of that group (e.g. MPI_Bcast over the kind's MPI communicator). Only the
/// per-group path (no ncclCommSplit) calls it, once per kind other than `global` of
/// which the caller is a member.
using GroupBroadcast = std::function<void(std::string_view group, std::span<std::byte> bytes)>;

/// The communicators of one rank, one per group kind it belongs to, in the Layout's
/// creation order (`global` first), each under its kind's name. Destruction goes in
/// reverse order, so every rank destroys in the same order (ncclCommDestroy is an
/// intra-node collective) and children go before the parent whose resources they share.
/// Move-only.
class GroupCommunicators {
 public:
  GroupCommunicators() noexcept = default;
  GroupCommunicators(const GroupCommunicators&) = delete;
  GroupCommunicators& operator=(const GroupCommunicators&) = delete;
  GroupCommunicators(GroupCommunicators&& other) noexcept = default;
  GroupCommunicators& operator=(GroupCommunicators&& other) noexcept;
  ~GroupCommunicators();

  /// Whether the kind's communicator is held. O(kinds).
  [[nodiscard]] bool contains(std::string_view group) const noexcept;
  [[nodiscard]] bool contains(ParallelMode mode) const noexcept { return contains(mode_name(mode)); }
  /// Throws StateError naming the kind when it is not held.
  [[nodiscard]] NcclCommunicator& at(std::string_view group);
  [[nodiscard]] const NcclCommunicator& at(std::string_view group) const;
  [[nodiscard]] NcclCommunicator& at(ParallelMode mode) { return at(mode_name(mode)); }
  [[nodiscard]] const NcclCommunicator& at(ParallelMode mode) const { return at(mode_name(mode)); }
  /// The kinds held, in creation order.
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] std::size_t size() const noexcept { return comms_.size(); }
  [[nodiscard]] bool empty() const noexcept { return comms_.empty(); }

  /// Seconds spent creating the kind's communicator, as given to add() (for `global`,
  /// create_group_communicators records 0: the world was created before the call).
  /// Throws StateError naming the kind when it is not held.
  [[nodiscard]] double creation_seconds(std::string_view group) const;
  [[nodiscard]] double creation_seconds(ParallelMode mode) const { return creation_seconds(mode_name(mode)); }

  /// Appends the communicator of a kind not yet held (StateError otherwise).
  void add(std::string group, NcclCommunicator comm, double creation_seconds = 0.0);
  /// Makes `group` (not yet held) answer with the communicator of `target` (held): a kind
  /// that shares another's communicator (communicator_sharing). at(), contains() and
  /// names() see it; destroy() and abort() free only the target, once.
  void alias(std::string group, std::string target);
  /// Destroys every communicator in reverse creation order; on the first failure, aborts
  /// the rest and rethrows. Empty afterwards.
  void destroy();
  /// Aborts every communicator. Never throws. Empty afterwards.
  void abort() noexcept;

 private:
  struct Entry {
    std::string group;
    NcclCommunicator comm;  // empty for an alias
    double creation_seconds;
    std::string alias_of;   // the kind whose communicator this one uses, or empty
  };
  [[nodiscard]] const Entry& entry(std::string_view group) const;
  void destroy_quietly() noexcept;

  std::vector<Entry> comms_;
};

/// Creates the communicators of every group kind of `layout` for global rank `rank`,
/// taking ownership of `world` (which must be the world communicator of `layout`: size
/// layout.world_size(), NCCL rank == `rank`) under world_key(layout). Collective over the world:
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
/// also NCCL's commName); a `world` kind is an alias of "global", a `shared` one an alias
/// of its owner, and a `singleton` kind gets nothing here (its one-rank communicator is
/// made by the rank alone when asked for). Every rank passes the same sharing.
[[nodiscard]] GroupCommunicators create_group_communicators(NcclCommunicator world, const Layout& layout,
                                                            std::int64_t rank, const CommOptions& options = {},
                                                            const GroupBroadcast& group_broadcast = {},
                                                            std::span<const KindSharing> sharing = {});

}  // namespace pgroups::nccl
