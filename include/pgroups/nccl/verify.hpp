#pragma once
/// \file
/// Checks that communicators connect the ranks the layout says: every rank all-reduces
/// its global rank, and the sum must be the sum of its group's ranks.

#include <cstdint>
#include <vector>

#include "pgroups/layout.hpp"
#include "pgroups/nccl/communicator.hpp"
#include "pgroups/nccl/mode_communicators.hpp"
#include "pgroups/parallel_mode.hpp"

namespace pgroups::nccl {

/// ncclAllReduce (sum, int64, in place on a plain cudaMalloc buffer, own stream) of
/// `global_rank` over `comm`, on the communicator's device; returns the sum once the
/// stream has finished. Collective over `comm`. Waits at most comm.timeout() for the
/// reduction; on expiry aborts `comm` and throws TimeoutError. BackendError for a CUDA
/// or NCCL failure (which also aborts `comm`), StateError when `comm` is empty.
[[nodiscard]] std::int64_t allreduce_rank_sum(NcclCommunicator& comm, std::int64_t global_rank);

/// The sum of the global ranks of `rank`'s group in `mode`: what allreduce_rank_sum
/// must return. Throws as Layout::group_of.
[[nodiscard]] std::int64_t expected_rank_sum(const Layout& layout, std::int64_t rank, ParallelMode mode);

/// One mode's check.
struct RankSumCheck {
  ParallelMode mode = ParallelMode::global;
  std::int64_t expected = 0;
  std::int64_t actual = 0;
  [[nodiscard]] bool ok() const noexcept { return expected == actual; }
};

/// allreduce_rank_sum for every communicator in `comms`, in creation order (a collective
/// over the world, as creation was), each compared with expected_rank_sum. Returns one
/// entry per mode; a mismatch is reported, not thrown. Throws as allreduce_rank_sum.
[[nodiscard]] std::vector<RankSumCheck> verify_rank_sums(ModeCommunicators& comms, const Layout& layout,
                                                         std::int64_t rank);

}  // namespace pgroups::nccl
