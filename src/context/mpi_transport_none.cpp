// The MPI transport of a build without MPI (transport.hpp): there is no MPI communicator
// to build over, and nothing of MPI to guard.

#include "pgroups/common/error.hpp"
#include "transport.hpp"

namespace pgroups::detail {

std::unique_ptr<StepGuard> teardown_guard(std::chrono::milliseconds /*timeout*/, int /*rank*/, int /*size*/) noexcept {
  return nullptr;
}

std::unique_ptr<Transport> mpi_transport(MpiComm /*world*/) {
  throw ConfigError(
      "this pgroups was built without MPI (PGROUPS_WITH_MPI=OFF): a ParallelContext over an MPI communicator needs "
      "it; build the context over a bootstrap (ParallelContext(config, bootstrap, options), backend gloo)");
}

}  // namespace pgroups::detail
