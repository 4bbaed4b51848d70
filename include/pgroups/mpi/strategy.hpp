#pragma once
/// \file
/// How the communicator of one group kind (Layout::group_kinds(): a Colossal-AI mode such
/// as `data`, or a mesh group such as `tp-dp`) is created from the world communicator.
/// Each strategy is one function; create_group_communicator() dispatches on the enum, so
/// a new strategy is one enumerator, one name and one function.
///
/// Common contract of the create_by_* functions:
///   - `parent` is the layout's world: parent.size() == layout.world_size() and the
///     parent rank of every process is its global rank (ConfigError otherwise).
///   - `kind` indexes layout.group_kinds() (StateError otherwise, from Layout).
///   - Every rank of `parent` calls the same function for the same kind, in the same
///     order as the other ranks (collective; what "collective" covers is per strategy).
///   - The result is the calling rank's group of that kind, owned, with MPI_ERRORS_RETURN,
///     its ranks ordered by local rank (so MPI_Comm_rank is Layout::local_rank); the null
///     communicator for a rank outside every group of a partial kind (Megatron's `embd`,
///     Layout::is_member false), which still takes its part in the collective.
///   - MPI failures throw BackendError; nothing is leaked on any path.

#include <cstddef>

#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_mode.hpp"
#include "pgroups/mpi/communicator.hpp"
#include "pgroups/mpi/creation_strategy.hpp"

namespace pgroups::mpi {

/// MPI_Comm_split(parent, colour = group index (MPI_UNDEFINED outside every group),
/// key = local rank): collective over `parent`. O(1) layout work and one collective per
/// rank.
[[nodiscard]] Communicator create_by_comm_split(const Communicator& parent, const Layout& layout, std::size_t kind);

/// MPI_Comm_create_group over the rank's own group with tag create_group_tag(kind):
/// collective over that group only (a non-member calls nothing). O(group size) to build
/// the MPI_Group.
[[nodiscard]] Communicator create_by_create_group(const Communicator& parent, const Layout& layout, std::size_t kind);

/// MPI_Comm_create(parent, own group, or MPI_GROUP_EMPTY outside every group): since
/// MPI-2.2 the ranks of one call may name different, disjoint groups, so one call per
/// kind creates every group of the kind, with no colour exchange (which MPI_Comm_split
/// needs, although every rank could compute every colour). Collective over `parent`;
/// O(group size) to build the MPI_Group.
[[nodiscard]] Communicator create_by_comm_create(const Communicator& parent, const Layout& layout, std::size_t kind);

/// The baseline: for every group of the kind, every rank calls MPI_Comm_create on
/// `parent` with that group and keeps the one it belongs to. Collective over `parent`
/// group_count(kind) times; O(world size) layout work per rank.
[[nodiscard]] Communicator create_by_per_group(const Communicator& parent, const Layout& layout, std::size_t kind);

/// Dispatches to the create_by_* function of `strategy`.
[[nodiscard]] Communicator create_group_communicator(const Communicator& parent, const Layout& layout, std::size_t kind,
                                                     CreationStrategy strategy);
/// The same for a preset's mode (the kind named mode_name(mode)).
[[nodiscard]] Communicator create_group_communicator(const Communicator& parent, const Layout& layout,
                                                     ParallelMode mode, CreationStrategy strategy);

/// The tag create_by_create_group uses for the kind at index `kind`: distinct per kind,
/// below the 32767 that MPI guarantees as MPI_TAG_UB for up to 12088 kinds (beyond, it
/// wraps; kinds are created one after another, so tags only keep apart the messages of
/// one creation).
[[nodiscard]] constexpr int create_group_tag(std::size_t kind) noexcept {
  return 0x5047 + static_cast<int>(kind % 12088);
}

}  // namespace pgroups::mpi
