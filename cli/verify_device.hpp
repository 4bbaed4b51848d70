#pragma once
// The NCCL half of `pgroups verify --backend nccl`: each mode's device communicator
// all-reduces every member's global rank (ncclAllReduce), and the sum must be the sum of
// the group's ranks in the layout. Rank 0 gathers the picture.

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "pgroups/context/parallel_context.hpp"
#include "pgroups/report/verify_report.hpp"

namespace pgroups::cli {

/// Rank 0's picture of one group kind's NCCL communicators (shown by the report layer).
using DeviceKindReport = report::VerifyDeviceReport;

/// What this rank takes part in and learns.
struct DeviceCheck {
  std::vector<DeviceKindReport> reports;  ///< one per group kind, in creation order
  bool ok_here = true;                    ///< every sum matched on this rank
};

/// Collective over `world`: ParallelContext::check_device_groups, then one gather per
/// group kind on rank 0 (a rank outside a partial kind contributes an empty check). A rank whose sum differs says so on
/// stderr. Throws what check_device_groups throws, and BackendError for an MPI failure.
[[nodiscard]] DeviceCheck check_device_groups(MPI_Comm world, int rank, int size, ParallelContext& context);

}  // namespace pgroups::cli
