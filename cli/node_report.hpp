#pragma once
// The nodes of a running job, as `verify` gathers them: which node each rank is on
// (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED), the hosts, what the launcher's
// variables say (pgroups/launch/launcher.hpp). The report layer shows them
// (report::live_nodes_json / live_nodes_text).

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "pgroups/report/locality_report.hpp"  // LiveNodes and its printers

namespace pgroups::cli {

using report::LiveNodes;

/// Collective over `world`: one MPI_Comm_split_type, an MPI_Allreduce on the node, an
/// MPI_Allgather and two MPI_Gathers on the world. Throws BackendError.
[[nodiscard]] LiveNodes gather_live_nodes(MPI_Comm world);

}  // namespace pgroups::cli
