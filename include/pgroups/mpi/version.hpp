#pragma once
/// \file
/// Which MPI pgroups runs on. Both functions may be called before MPI_Init and after
/// MPI_Finalize (MPI-3), so that `pgroups info` works without mpirun.

#include <string>

namespace pgroups::mpi {

/// The first line of MPI_Get_library_version, e.g. "Open MPI v4.1.6, package: Debian
/// OpenMPI, ident: 4.1.6, repo rev: v4.1.6, Sep 30, 2023" (trailing blanks removed).
/// Throws BackendError when the call fails.
[[nodiscard]] std::string library_version();

/// The MPI standard the library implements (MPI_Get_version), e.g. "3.1". Throws
/// BackendError when the call fails.
[[nodiscard]] std::string standard_version();

/// Whether the MPI compiled against has ULFM's fault tolerance (MPIX_Comm_shrink,
/// MPIX_Comm_agree), by its compile-time macros: Open MPI's mpi-ext.h defines
/// OMPI_HAVE_MPI_EXT_FTMPI, an MPI with the ULFM error classes defines MPIX_ERR_PROC_FAILED.
/// Without it a dead rank ends an MPI job: survivors cannot shrink their communicators, and
/// the new layout comes from `pgroups plan --lost` before a relaunch (docs/using/recovery.md).
[[nodiscard]] bool has_ulfm() noexcept;

}  // namespace pgroups::mpi
