#pragma once
/// \file
/// ContextOptions: how a ParallelContext builds its groups, as opposed to which groups
/// (ParallelConfig). An aggregate with defaults, so that callers set only what they
/// change and new options (a timeout, a backend, ...) can be added without breaking
/// them.

#include <cstdint>
#include <optional>

#include "pgroups/mpi/strategy.hpp"

namespace pgroups {

using mpi::CreationStrategy;

struct ContextOptions {
  /// How each mode's communicator is created; every rank must pass the same one
  /// (checked with the configuration).
  CreationStrategy strategy = CreationStrategy::split;
  /// This rank's device ordinal. When absent, ParallelContext::device() is
  /// global_rank % devices_per_node. May differ between ranks.
  std::optional<std::int64_t> device;
  /// Devices on each node; 0 means "one per process on the node" (what
  /// MPI_COMM_TYPE_SHARED reports). May differ between ranks.
  std::int64_t devices_per_node = 0;
};

}  // namespace pgroups
