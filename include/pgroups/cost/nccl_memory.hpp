#pragma once
/// \file
/// The model of the NCCL device memory a rank's communicators take, from a Layout alone
/// and the bill of communicators (pgroups/layout/communicator_sharing.hpp): what
/// `pgroups plan --format json`'s `nccl_memory` and Python's `Plan.bill()` report. Pure:
/// no MPI, CUDA or NCCL.

#include <cstdint>

#include "pgroups/layout/layout.hpp"

namespace pgroups {

/// The model of NCCL device memory per communicator, in MiB, by its size and whether it
/// stays in a node; the figures and their sources are in docs/developing/performance.md. An
/// estimate: NCCL's use depends on its version, the GPUs, the transports, NCCL_BUFFSIZE
/// and NCCL_RUNTIME_CONNECT.
struct NcclMemoryModel {
  double one_rank_mib = 512.0;                     ///< nccl#2363, NCCL 2.28.9
  double two_ranks_mib = 544e6 / (1024.0 * 1024);  ///< nccl#964: 544 MB, 2-GPU group, A100
  double larger_mib = 688e6 / (1024.0 * 1024);     ///< nccl#964: 688 MB, larger groups, A100
  /// No published measurement of a communicator spanning nodes was found: the model
  /// uses the figures above for both until scripts/gpu-check.sh calibrates it.
  double inter_node_extra_mib = 0.0;
};

struct NcclEstimate {
  double mib = 0.0;
  std::int64_t communicators = 0;  ///< == the bill's created (the NCCL world and each split)
  std::int64_t intra_node = 0;     ///< of them, communicators within one node
  std::int64_t inter_node = 0;     ///< ... spanning nodes (every rank on one node when gpus_per_node is unset)
};

/// Model memory of the NCCL communicators `rank` creates (the bill's created ones; the
/// one-rank ones are made only when asked for, and cost model.one_rank_mib each then).
/// A group stays in a node when every member's node (rank / gpus_per_node, block
/// placement) is the same; without gpus_per_node every rank is taken to be on one node.
/// O(kinds x dimensions x log kinds): a group's first and last members decide; under a
/// rank map that reorders a kind, O(group size log group size) for each such kind.
[[nodiscard]] NcclEstimate estimate_nccl_memory(const Layout& layout, std::int64_t rank, bool share = true,
                                                const NcclMemoryModel& model = {});

}  // namespace pgroups
