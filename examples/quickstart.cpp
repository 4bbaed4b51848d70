// quickstart: the smallest complete program on pgroups' C++ API.
//   mpirun -np 4 quickstart        (any multiple of 4 ranks: pipeline 2 x tensor 2 x data)

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdio>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/mpi/check.hpp"
#include "pgroups/mpi/session.hpp"

namespace {

using pgroups::ParallelMode;

int run() {
  pgroups::ParallelConfig config;  // world_size stays 0: the size of the communicator
  config.pipeline = 2;
  config.tensor_size = 2;
  config.tensor_mode = pgroups::TensorMode::tensor_1d;
  pgroups::ParallelContext context(config, MPI_COMM_WORLD);  // collective

  // A data-parallel all-reduce ("gradients"): the sum of the group's global ranks.
  long long sum = context.global_rank();
  pgroups::mpi::check(
      MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG_LONG, MPI_SUM, context.get_group(ParallelMode::data).mpi()),
      "MPI_Allreduce(data)");
  long long expected = 0;
  for (long long member : context.ranks_in_group(ParallelMode::data)) expected += member;

  // What this rank knows, gathered on rank 0 so that the lines come out in rank order.
  const std::array<long long, 12> row = {context.global_rank(),
                                         context.local_rank(ParallelMode::data),
                                         context.world_size(ParallelMode::data),
                                         context.local_rank(ParallelMode::pipe),
                                         context.world_size(ParallelMode::pipe),
                                         context.local_rank(ParallelMode::tensor),
                                         context.world_size(ParallelMode::tensor),
                                         context.prev_global_rank(ParallelMode::pipe),
                                         context.next_global_rank(ParallelMode::pipe),
                                         context.seed(ParallelMode::data),
                                         context.seed(ParallelMode::tensor),
                                         sum == expected ? 1 : 0};
  const MPI_Comm world = context.get_group(ParallelMode::global).mpi();
  const bool leader = context.global_rank() == 0;
  const auto ranks = static_cast<std::size_t>(context.world_size(ParallelMode::global));
  std::vector<long long> rows(leader ? ranks * row.size() : 0);
  pgroups::mpi::check(MPI_Gather(row.data(), static_cast<int>(row.size()), MPI_LONG_LONG, rows.data(),
                                 static_cast<int>(row.size()), MPI_LONG_LONG, 0, world),
                      "MPI_Gather(global)");

  int failures = 0;
  if (leader) {
    std::printf("quickstart: %s\n", pgroups::describe(context.config()).c_str());
    for (std::size_t r = 0; r < ranks; ++r) {
      const long long* v = &rows[r * row.size()];
      std::printf(
          "rank %lld: data %lld/%lld, pipe %lld/%lld, tensor %lld/%lld; pipe prev %lld, next %lld; "
          "seeds data %lld, tensor %lld\n",
          v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]);
      if (v[11] == 0) ++failures;
    }
    std::printf("all-reduce over data: %s\n", failures == 0 ? "OK" : "WRONG SUM");
  }
  context.destroy();  // collective; the destructor would do it too, ignoring errors
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    pgroups::mpi::Session session(argc, argv);  // MPI_Init_thread now, MPI_Finalize at the end
    try {
      return run();
    } catch (const pgroups::ConfigError&) {
      throw;  // thrown on every rank alike, so every rank can finalize MPI and leave
    } catch (const pgroups::MismatchError&) {
      throw;  // likewise
    } catch (const pgroups::Error& error) {
      // Possibly this rank's alone, the others blocked in a collective where
      // MPI_Finalize would hang: end the whole job.
      std::fprintf(stderr, "quickstart: %s\n", error.what());
      pgroups::mpi::abort_job(MPI_COMM_WORLD, static_cast<int>(error.exit_code()));
    }
  } catch (const pgroups::Error& error) {
    std::fprintf(stderr, "quickstart: %s\n", error.what());
    return static_cast<int>(error.exit_code());
  }
}
