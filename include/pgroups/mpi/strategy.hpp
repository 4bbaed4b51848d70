#pragma once
/// \file
/// How the communicator of one parallel mode is created from the world communicator.
/// Each strategy is one function; create_mode_communicator() dispatches on the enum, so
/// a new strategy is one enumerator, one name and one function.
///
/// Common contract of the create_by_* functions:
///   - `parent` is the layout's world: parent.size() == layout.world_size() and the
///     parent rank of every process is its global rank (ConfigError otherwise).
///   - `mode` is a mode of `layout` (StateError otherwise, from Layout).
///   - Every rank of `parent` calls the same function for the same mode, in the same
///     order as the other ranks (collective; what "collective" covers is per strategy).
///   - The result is the calling rank's group in `mode`, owned, with MPI_ERRORS_RETURN,
///     its ranks ordered by local rank (so MPI_Comm_rank is Layout::local_rank).
///   - MPI failures throw BackendError; nothing is leaked on any path.

#include <array>
#include <cstdint>
#include <string_view>

#include "pgroups/layout.hpp"
#include "pgroups/mpi/communicator.hpp"
#include "pgroups/parallel_mode.hpp"

namespace pgroups::mpi {

enum class CreationStrategy : std::uint8_t {
  comm_split,    ///< one MPI_Comm_split per mode
  create_group,  ///< one MPI_Comm_create_group per mode over the rank's own group
  per_group,     ///< Colossal-AI's algorithm: one MPI_Comm_create per group of the mode
  comm_create,   ///< one MPI_Comm_create per mode, each rank naming its own (disjoint) group
};

inline constexpr std::array<CreationStrategy, 4> kAllCreationStrategies = {
    CreationStrategy::comm_split, CreationStrategy::create_group, CreationStrategy::per_group,
    CreationStrategy::comm_create};

/// The default: the fastest correct strategy measured (docs/performance.md). Every rank
/// creates only its own group, with one collective per mode among that group's members;
/// MPI_Comm_split's all-gather of colours is redundant when every rank can compute every
/// colour, and collectives over the whole world cost more than those over a group.
inline constexpr CreationStrategy kDefaultCreationStrategy = CreationStrategy::create_group;

/// "comm_split", "create_group", "per_group" or "comm_create"; ConfigError naming the
/// number for a value that is no enumerator.
[[nodiscard]] std::string_view strategy_name(CreationStrategy strategy);

/// The strategy with that exact name, or kDefaultCreationStrategy for "split" (the name
/// of the default: one collective per mode, whatever MPI call it uses); ConfigError
/// naming the value, the valid names and the closest one otherwise.
[[nodiscard]] CreationStrategy parse_creation_strategy(std::string_view text);

/// MPI_Comm_split(parent, colour = group index, key = local rank): collective over
/// `parent`. O(1) layout work and one collective per rank.
[[nodiscard]] Communicator create_by_comm_split(const Communicator& parent, const Layout& layout, ParallelMode mode);

/// MPI_Comm_create_group over the rank's own group with tag create_group_tag(mode):
/// collective over that group only. O(group size) to build the MPI_Group.
[[nodiscard]] Communicator create_by_create_group(const Communicator& parent, const Layout& layout,
                                                  ParallelMode mode);

/// MPI_Comm_create(parent, own group): since MPI-2.2 the ranks of one call may name
/// different, disjoint groups, so one call per mode creates every group of the mode,
/// with no colour exchange (which MPI_Comm_split needs, although every rank could
/// compute every colour). Collective over `parent`; O(group size) to build the MPI_Group.
[[nodiscard]] Communicator create_by_comm_create(const Communicator& parent, const Layout& layout,
                                                 ParallelMode mode);

/// The baseline: for every group of the mode, every rank calls MPI_Comm_create on
/// `parent` with that group and keeps the one it belongs to. Collective over `parent`
/// group_count(mode) times; O(world size) layout work per rank.
[[nodiscard]] Communicator create_by_per_group(const Communicator& parent, const Layout& layout, ParallelMode mode);

/// Dispatches to the create_by_* function of `strategy`.
[[nodiscard]] Communicator create_mode_communicator(const Communicator& parent, const Layout& layout,
                                                    ParallelMode mode, CreationStrategy strategy);

/// The tag create_by_create_group uses for `mode`: distinct per mode, below the 32767
/// that MPI guarantees as MPI_TAG_UB.
[[nodiscard]] constexpr int create_group_tag(ParallelMode mode) noexcept {
  return 0x5047 + static_cast<int>(mode);
}

}  // namespace pgroups::mpi
