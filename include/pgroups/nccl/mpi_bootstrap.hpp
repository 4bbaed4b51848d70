#pragma once
/// \file
/// The MPI side of NCCL bootstrapping: a Broadcast over an MPI communicator and the
/// node-local rank from a shared-memory split. The only NCCL-layer header that includes
/// <mpi.h>; available when pgroups::nccl was built with MPI (PGROUPS_NCCL_HAVE_MPI).

#include <mpi.h>

#include "pgroups/nccl/communicator.hpp"

namespace pgroups::nccl {

/// A Broadcast doing MPI_Bcast of the bytes from rank 0 of `comm` (MPI_BYTE). `comm` is
/// captured by handle: it must stay valid while the returned function is used. An MPI
/// error code becomes BackendError with MPI_Error_string (MPI's default handler aborts
/// the job before that, unless the communicator's handler returns errors).
[[nodiscard]] Broadcast mpi_broadcast(MPI_Comm comm);

/// The caller's rank in `node_comm`, the result of
/// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): its index among the processes on its node,
/// for DeviceRequest::node_local_rank. Throws BackendError when MPI_Comm_rank fails.
[[nodiscard]] int node_local_rank(MPI_Comm node_comm);

}  // namespace pgroups::nccl
