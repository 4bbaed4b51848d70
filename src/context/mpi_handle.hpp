#pragma once
// The MPI communicator a kind's entry and the world keep in LiveGroups, internal to
// pgroups::context: the MPI backend's RAII Communicator in a build with MPI; in a build
// without it, a handle that is always null, so that the one construction path, the
// queries and the teardown compile the same either way.

#include "pgroups/context/mpi_comm.hpp"

#if PGROUPS_CONTEXT_WITH_MPI
#include "pgroups/mpi/communicator.hpp"

namespace pgroups::detail {
using MpiHandle = mpi::Communicator;
}  // namespace pgroups::detail
#else
namespace pgroups::detail {
class MpiHandle {
 public:
  [[nodiscard]] bool is_null() const noexcept { return true; }
  [[nodiscard]] MpiComm get() const noexcept { return nullptr; }
  void free() noexcept {}
};
}  // namespace pgroups::detail
#endif
