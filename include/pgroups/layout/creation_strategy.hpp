#pragma once
/// \file
/// CreationStrategy: which MPI calls create the communicator of each kind, by name. A value
/// of the plan's options (ContextOptions, option parsing, the agreement record), so it lies
/// in the pure layer and needs no <mpi.h>; the MPI backend runs it
/// (pgroups/mpi/strategy.hpp).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace pgroups {

enum class CreationStrategy : std::uint8_t {
  comm_split,    ///< one MPI_Comm_split per mode
  create_group,  ///< one MPI_Comm_create_group per mode over the rank's own group
  per_group,     ///< Colossal-AI's algorithm: one MPI_Comm_create per group of the mode
  comm_create,   ///< one MPI_Comm_create per mode, each rank naming its own (disjoint) group
};

inline constexpr std::array<CreationStrategy, 4> kAllCreationStrategies = {
    CreationStrategy::comm_split, CreationStrategy::create_group, CreationStrategy::per_group,
    CreationStrategy::comm_create};

/// The default: the fastest correct strategy measured (docs/developing/performance.md). Every rank
/// creates only its own group, with one collective per mode among that group's members;
/// MPI_Comm_split's all-gather of colours is redundant when every rank can compute every
/// colour, and collectives over the whole world cost more than those over a group.
inline constexpr CreationStrategy kDefaultCreationStrategy = CreationStrategy::create_group;

/// "comm_split", "create_group", "per_group" or "comm_create"; ConfigError naming the
/// number for a value that is no enumerator.
[[nodiscard]] std::string_view strategy_name(CreationStrategy strategy);

/// The strategy with that exact name, or kDefaultCreationStrategy for the deprecated alias
/// "split" (see strategy_deprecation); ConfigError naming the value, the valid names and
/// the closest one otherwise.
[[nodiscard]] CreationStrategy parse_creation_strategy(std::string_view text);

/// The warning for a deprecated strategy name, or an empty string for a current one.
/// "split" once named the default and reads as MPI_Comm_split, which the default does not
/// run (it runs MPI_Comm_create_group); each strategy is now named by its MPI call. The
/// CLI prints the warning on stderr, Python raises it as a DeprecationWarning.
[[nodiscard]] std::string strategy_deprecation(std::string_view text);

}  // namespace pgroups
