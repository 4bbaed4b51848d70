#pragma once
/// \file
/// Agreeing on the outcome of a local step before the next collective: a step that can
/// fail on some ranks only (binding a device, opening a file) must not leave the ranks
/// that succeeded waiting forever in a collective the others never reach.

#include <exception>
#include <string_view>

#include "pgroups/mpi/communicator.hpp"

namespace pgroups::mpi {

/// Collective over `comm`: every rank passes the exception its local step threw (null
/// when it succeeded). Returns when no rank failed, after one MPI_Allreduce. Otherwise
/// every rank throws, and none returns:
///  - a rank that failed rethrows its own exception;
///  - every other rank throws BackendError "<step> failed on rank(s) <runs>; rank <r>:
///    <message>", with the message of the lowest failed rank r (one MPI_Allgather and
///    two MPI_Bcast more, on the failure path only).
/// Throws BackendError for an MPI failure of its own.
void require_success_everywhere(const Communicator& comm, const std::exception_ptr& local, std::string_view step);

}  // namespace pgroups::mpi
