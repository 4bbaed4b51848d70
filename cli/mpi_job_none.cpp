// A build without MPI: the jobs run on the other bootstraps alone.

#include "job.hpp"
#include "pgroups/common/error.hpp"

namespace pgroups::cli {

std::unique_ptr<JobTransport> mpi_job_transport(std::chrono::milliseconds /*timeout*/) {
  throw ConfigError(
      "this pgroups was built without MPI (-DPGROUPS_WITH_MPI=OFF), so --backend mpi and nccl under MPI cannot run: "
      "use --backend gloo (or nccl) with --bootstrap env or pmix");
}

}  // namespace pgroups::cli
