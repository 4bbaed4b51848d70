#pragma once
/// \file
/// The one place where MPI return codes become exceptions: every MPI call of pgroups
/// goes through check(), which throws BackendError carrying the call's name and MPI's
/// own error string. It only sees the codes of communicators whose error handler is
/// MPI_ERRORS_RETURN; pgroups sets that handler on every communicator it creates or
/// duplicates, and Session sets it on MPI_COMM_WORLD and MPI_COMM_SELF when it owns MPI.
/// The only MPI codes not checked are those of calls on paths that must not throw
/// (destructors and other noexcept cleanup: MPI_Comm_free, MPI_Group_free, and the
/// MPI_Finalized / MPI_Query_thread queries they make) and of MPI_Abort, after which
/// the process ends anyway.

#include <mpi.h>

#include <string>
#include <string_view>

namespace pgroups::mpi {

/// MPI's text for `code` (MPI_Error_string) followed by its error class, e.g.
/// "MPI_ERR_COMM: invalid communicator (error class 5)". Never throws for a bad code.
[[nodiscard]] std::string error_string(int code);

/// Throws BackendError "`call` failed: <error_string(code)>".
[[noreturn]] void throw_error(int code, std::string_view call);

/// Does nothing for MPI_SUCCESS; otherwise throw_error(code, call).
inline void check(int code, std::string_view call) {
  if (code != MPI_SUCCESS) [[unlikely]] {
    throw_error(code, call);
  }
}

}  // namespace pgroups::mpi
