#pragma once
/// \file
/// Umbrella of the NCCL backend (target pgroups::nccl, built where CUDA and NCCL are).
/// Needs MPI (the bootstrap); nccl.h only where a header says so.

#include "pgroups/nccl/communicator.hpp"  // IWYU pragma: export
#include "pgroups/nccl/device.hpp"  // IWYU pragma: export
#include "pgroups/nccl/group_communicators.hpp"  // IWYU pragma: export
#include "pgroups/nccl/mpi_bootstrap.hpp"  // IWYU pragma: export
#include "pgroups/nccl/verify.hpp"  // IWYU pragma: export
#include "pgroups/nccl/version.hpp"  // IWYU pragma: export
