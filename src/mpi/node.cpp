#include "pgroups/mpi/node.hpp"

#include "pgroups/launch/launcher.hpp"
#include "pgroups/mpi/check.hpp"

namespace pgroups::mpi {

NodeInfo node_info(const Communicator& comm) {
  MPI_Comm shared = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &shared),
        "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  const Communicator node = Communicator::adopt(shared);
  return {node.size(), node.rank()};
}

std::optional<NodeInfo> node_info_from_launcher(const Communicator& comm) {
  int relation = MPI_UNEQUAL;
  check(MPI_Comm_compare(comm.get(), MPI_COMM_WORLD, &relation), "MPI_Comm_compare");
  if (relation != MPI_IDENT && relation != MPI_CONGRUENT) return std::nullopt;
  // Only an MPI launcher's variables describe MPI_COMM_WORLD (torchrun starts no MPI
  // job), and only when they name this very rank of this world: variables inherited
  // from another job (a launcher started from inside one) would otherwise be taken as
  // this job's.
  const LauncherInfo launcher = detect_launcher();
  if (launcher.launcher == Launcher::none || launcher.launcher == Launcher::torchrun) return std::nullopt;
  if (launcher.rank != comm.rank() || launcher.world_size != comm.size()) return std::nullopt;
  if (!launcher.local_rank || !launcher.local_size) return std::nullopt;
  return NodeInfo{*launcher.local_size, *launcher.local_rank};
}

}  // namespace pgroups::mpi
