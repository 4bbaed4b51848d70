#pragma once
/// \file
/// MpiComm: an MPI communicator as the context's public API names it. In a build with MPI
/// (PGROUPS_CONTEXT_WITH_MPI, which pgroups::context passes to what links it) it is
/// MPI_Comm itself, <mpi.h> included; in a build without MPI it is an opaque pointer that
/// no communicator has, so that the same headers compile with no <mpi.h> anywhere and the
/// MPI-only calls refuse at run time (ConfigError: "built without MPI").

#if !defined(PGROUPS_CONTEXT_WITH_MPI) || PGROUPS_CONTEXT_WITH_MPI
#include <mpi.h>

namespace pgroups {
using MpiComm = MPI_Comm;
}  // namespace pgroups
#else
namespace pgroups {
struct NoMpiCommunicator;
using MpiComm = NoMpiCommunicator*;
}  // namespace pgroups
#endif
