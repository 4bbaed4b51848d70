// A C++ port of a Colossal-AI script, written from the seed's page alone
// (colossalai.context.process_group_initializer: its class names, constructor
// arguments and init_dist_group() fields). Run under mpirun on 8 ranks, it builds every
// mode's groups of four configurations, checks each group's size and rank against its
// communicator with one all-reduce, and rank 0 prints "seed consumer OK".

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "pgroups/context/process_group_initializer.hpp"

namespace {

// The seed's fields: (local_rank, group_world_size, process_group, ranks_in_group, mode).
bool check(const pgroups::DistGroup& group, int rank) {
  int size = 0;
  int local = -1;
  MPI_Comm_size(group.process_group.get(), &size);
  MPI_Comm_rank(group.process_group.get(), &local);
  int members = 0;
  const int one = 1;
  MPI_Allreduce(&one, &members, 1, MPI_INT, MPI_SUM, group.process_group.get());
  return size == group.group_world_size && local == group.local_rank && members == size &&
         static_cast<std::int64_t>(group.ranks_in_group.size()) == size &&
         group.ranks_in_group[static_cast<std::size_t>(local)] == rank;
}

bool check_all(const std::vector<pgroups::DistGroup>& groups, int rank) {
  bool ok = !groups.empty();
  for (const auto& group : groups) ok = check(group, rank) && ok;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  bool ok = world_size == 8;
  try {
    using namespace pgroups;
    ParallelConfig config;  // the running configuration: seeds and the legacy switch
    // Data, model, pipeline and tensor groups, and 2D: pipeline 2, tensor 4 (2 x 2).
    ok = check(Initializer_Data(rank, world_size, config, 1, 2, 4).init_dist_group(), rank) && ok;
    ok = check(Initializer_Model(rank, world_size, config, 1, 2, 4).init_dist_group(), rank) && ok;
    ok = check(Initializer_Tensor(rank, world_size, config, 1, 2, 4).init_dist_group(), rank) && ok;
    ok = check_all(Initializer_Pipeline(rank, world_size, config, 1, 2, 4).init_dist_group(), rank) && ok;
    ok = check_all(Initializer_2D(rank, world_size, config, 1, 2, 4).init_dist_group(), rank) && ok;
    ok = check(Initializer_1D(rank, world_size, config, 2, 1, 4).init_dist_group(), rank) && ok;
    ok = check_all(Initializer_Sequence(rank, world_size, config, 1, 2, 4).init_dist_group(), rank) && ok;
    // 2.5D: tensor 8 = 2 * 2 * depth 2; 3D: tensor 8 = 2 ** 3.
    ok = check_all(Initializer_2p5D(rank, world_size, config, 1, 1, 8, 2).init_dist_group(), rank) && ok;
    const std::vector<DistGroup> three_d = Initializer_3D(rank, world_size, config, 1, 1, 8).init_dist_group();
    ok = check_all(three_d, rank) && three_d.size() == 5 && ok;
  } catch (const pgroups::Error& error) {
    std::fprintf(stderr, "seed consumer: rank %d: %s\n", rank, error.what());
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(error.exit_code()));
  }
  int all_ok = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s\n", all_ok != 0 ? "seed consumer OK" : "seed consumer: WRONG GROUPS");
  MPI_Finalize();
  return all_ok != 0 ? 0 : 1;
}
