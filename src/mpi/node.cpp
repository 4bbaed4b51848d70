#include "pgroups/mpi/node.hpp"

#include <cerrno>
#include <cstdlib>

#include "pgroups/mpi/error.hpp"

namespace pgroups::mpi {

NodeInfo node_info(const Communicator& comm) {
  MPI_Comm shared = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &shared),
        "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  const Communicator node = Communicator::adopt(shared);
  return {node.size(), node.rank()};
}

namespace {
std::optional<std::int64_t> non_negative_env(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0) return std::nullopt;
  return value;
}
}  // namespace

std::optional<NodeInfo> node_info_from_launcher(const Communicator& comm) {
  int relation = MPI_UNEQUAL;
  check(MPI_Comm_compare(comm.get(), MPI_COMM_WORLD, &relation), "MPI_Comm_compare");
  if (relation != MPI_IDENT && relation != MPI_CONGRUENT) return std::nullopt;
  const auto local_rank = non_negative_env("OMPI_COMM_WORLD_LOCAL_RANK");
  const auto local_size = non_negative_env("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!local_rank || !local_size || *local_rank >= *local_size) return std::nullopt;
  return NodeInfo{*local_size, *local_rank};
}

}  // namespace pgroups::mpi
