#pragma once
/// \file
/// The cost model of group creation, computed from a Layout alone: how many
/// group-creation calls each rank makes and how many collectives it enters, for each of
/// pgroups' strategies and for Colossal-AI's algorithm (every rank takes part in
/// creating every group of every mode).

#include <cstdint>
#include <string_view>
#include <vector>

#include "pgroups/layout/layout.hpp"

namespace pgroups {

struct CreationCost {
  std::string_view algorithm;   ///< e.g. "create_group", "colossal-ai (nccl)"
  std::string_view call;        ///< the library call that creates a group
  std::int64_t calls_per_rank = 0;
  /// Collectives a rank enters; for pgroups' strategies the configuration agreement and
  /// the node query are included.
  std::int64_t collectives_per_rank = 0;
  /// Ranks that take part in each of those collectives (W, or the group's size).
  std::int64_t largest_collective = 0;
};

/// Counted as the steps a context runs (pgroups/context/creation_steps.hpp, MPI backend): pgroups creates one
/// communicator per group kind, the duplicate of the world (`global`) included: K = 1 +
/// the group steps calls per rank, and enters one collective per step (duplicate,
/// agreement, node query, one per kind). Colossal-AI reuses the world for `global` and
/// creates every group of every other kind on every rank.
/// Rows, in this order: colossal-ai (gloo), colossal-ai (nccl), per_group, comm_split,
/// comm_create, create_group (pgroups' default). O(number of group kinds). Throws
/// ConfigError naming the world size when a count does not fit in 64 bits (worlds of
/// about 2^58 ranks and more).
[[nodiscard]] std::vector<CreationCost> creation_costs(const Layout& layout);

}  // namespace pgroups
