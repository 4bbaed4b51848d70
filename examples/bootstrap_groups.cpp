// bootstrap_groups: a job's groups with no MPI in it. The process finds the others through
// whatever started it (launch's one door, start_bootstrap: torchrun's variables, a PMIx
// server from srun or mpirun, else MPI), builds every group of a tp=2,dp=2 mesh as a gloo context
// (ParallelContext on a Bootstrap, backend gloo), and all-reduces the global ranks over
// its data-parallel group with gloo's own allreduce. Rank 0 prints one line per rank it
// checked; the exit status is 0 only when every sum is the layout's.
//
//   torchrun --standalone --no-python --nproc_per_node 4 bootstrap_groups
//   srun --mpi=pmix -n 4 bootstrap_groups
//   mpirun -np 4 bootstrap_groups pmix            # Open MPI's PMIx, MPI never started
//   RANK=r WORLD_SIZE=4 LOCAL_RANK=r LOCAL_WORLD_SIZE=4 MASTER_ADDR=... MASTER_PORT=... bootstrap_groups
//
// The optional arguments name the bootstrap (auto, mpi, pmix, env) and the mesh (fastest
// first, default tp=2,dp=2; its kinds are its dimensions).
#include <gloo/allreduce.h>
#include <gloo/math.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string_view>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/launch/bootstrap.hpp"
#if PGROUPS_CONTEXT_WITH_MPI
#include "pgroups/mpi/bootstrap.hpp"
#endif

namespace {

using namespace std::chrono_literals;

// The data-parallel all-reduce of every rank's global rank, on gloo.
int run(pgroups::Bootstrap& bootstrap, std::string_view mesh) {
  pgroups::ParallelConfig config;
  config.mesh = pgroups::MeshConfig{pgroups::parse_mesh_dims(mesh), {}};
  pgroups::ContextOptions options;
  options.backend = pgroups::Backend::gloo;
  options.timeout = 30s;
  const pgroups::ParallelContext context(config, bootstrap, options);

  const std::shared_ptr<::gloo::Context> data = context.get_group("dp").gloo();
  std::int64_t sum = context.global_rank();
  ::gloo::AllreduceOptions reduce(data);
  reduce.setOutput(&sum, 1);
  reduce.setReduceFunction(
      static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&::gloo::sum<std::int64_t>));
  ::gloo::allreduce(reduce);

  const std::vector<std::int64_t> members = context.ranks_in_group("dp");
  const bool ok = sum == std::accumulate(members.begin(), members.end(), std::int64_t{0});
  std::printf("rank %lld of %d (%s bootstrap): all-reduce over dp: %lld, %s\n",
              static_cast<long long>(context.global_rank()), bootstrap.size(),
              std::string(pgroups::bootstrap_name(bootstrap.kind())).c_str(), static_cast<long long>(sum),
              ok ? "OK" : "WRONG SUM");
  bootstrap.barrier(30s, "the end of the example");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const pgroups::BootstrapKind requested =
        pgroups::parse_bootstrap(argc > 1 ? std::string_view(argv[1]) : std::string_view("auto"));
#if PGROUPS_CONTEXT_WITH_MPI
    pgroups::mpi::register_bootstrap();  // so that auto and mpi may start MPI, which ends with the bootstrap
#endif
    return run(*pgroups::start_bootstrap(requested, 30s), argc > 2 ? std::string_view(argv[2]) : "tp=2,dp=2");
  } catch (const pgroups::Error& error) {
    std::fprintf(stderr, "bootstrap_groups: %s\n", error.what());
    return static_cast<int>(error.exit_code());
  }
}
