#pragma once
/// \file
/// Checks that communicators connect the ranks the layout says: every rank all-reduces
/// its global rank, and the sum must be the sum of its group's ranks.

#include <cstdint>
#include <string_view>
#include <vector>

#include "pgroups/layout/group_check.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_mode.hpp"
#include "pgroups/nccl/communicator.hpp"
#include "pgroups/nccl/group_communicators.hpp"

namespace pgroups::nccl {

/// ncclAllReduce (sum, int64, in place on a plain cudaMalloc buffer, own stream) of
/// `global_rank` over `comm`, on the communicator's device; returns the sum once the
/// stream has finished. Collective over `comm`. Waits at most comm.timeout() for the
/// reduction; on expiry aborts `comm` and throws TimeoutError. BackendError for a CUDA
/// or NCCL failure (which also aborts `comm`), StateError when `comm` is empty.
[[nodiscard]] std::int64_t allreduce_rank_sum(NcclCommunicator& comm, std::int64_t global_rank);

/// The name verify_rank_sums gives the check of the world communicator: "global", the
/// group every rank is in (Colossal-AI's name for it), whether or not the layout has a
/// kind of that name.
inline constexpr std::string_view kWorldCheckName = "global";

/// The sum of the global ranks of `rank`'s group of kind `kind` (its index in
/// Layout::group_kinds(), or its name): what allreduce_rank_sum must return. Throws as
/// Layout::group_kind_index and Layout::group_of.
[[nodiscard]] std::int64_t expected_rank_sum(const Layout& layout, std::int64_t rank, std::size_t kind);
[[nodiscard]] std::int64_t expected_rank_sum(const Layout& layout, std::int64_t rank, std::string_view group);

/// allreduce_rank_sum over the world (named kWorldCheckName), then over every kind's
/// communicator in `comms` but the layout's world kind, in creation order (a collective
/// over the world, as creation was), each compared with its expected sum. Returns one
/// entry per check; a mismatch is reported, not thrown. Throws as allreduce_rank_sum.
[[nodiscard]] std::vector<GroupCheck> verify_rank_sums(GroupCommunicators& comms, const Layout& layout,
                                                       std::int64_t rank);

}  // namespace pgroups::nccl
