#include "node_report.hpp"

#include <array>

#include "pgroups/mpi/check.hpp"

namespace pgroups::cli {

using mpi::check;

LiveNodes gather_live_nodes(MPI_Comm world) {
  int rank = 0;
  int size = 0;
  check(MPI_Comm_rank(world, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(world, &size), "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  int node_rank = 0;
  int first = rank;
  check(MPI_Comm_rank(node, &node_rank), "MPI_Comm_rank");
  check(MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, node), "MPI_Allreduce");
  check(MPI_Comm_free(&node), "MPI_Comm_free");

  LiveNodes nodes;
  nodes.launcher = detect_launcher();
  std::vector<int> ids(static_cast<std::size_t>(size));
  check(MPI_Allgather(&first, 1, MPI_INT, ids.data(), 1, MPI_INT, world), "MPI_Allgather");
  nodes.node_of_rank.assign(ids.begin(), ids.end());

  const std::array<int, 2> mine = {node_rank,
                                   nodes.launcher.local_rank ? static_cast<int>(*nodes.launcher.local_rank) : -1};
  std::vector<int> all(rank == 0 ? 2 * static_cast<std::size_t>(size) : 0);
  check(MPI_Gather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, 0, world), "MPI_Gather");
  std::array<char, MPI_MAX_PROCESSOR_NAME> host{};
  int length = 0;
  check(MPI_Get_processor_name(host.data(), &length), "MPI_Get_processor_name");
  std::vector<char> hosts(rank == 0 ? host.size() * static_cast<std::size_t>(size) : 0);
  check(MPI_Gather(host.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
                   world),
        "MPI_Gather");
  // Each rank's place in Slurm's switch tree, cut to a fixed width (addresses are a few
  // switch names; a longer one no longer matches the pattern and drops the levels).
  constexpr std::size_t kAddressWidth = 256;
  std::array<char, kAddressWidth> address{};
  nodes.launcher.topology_address.value_or(std::string()).copy(address.data(), kAddressWidth - 1);
  std::vector<char> addresses(rank == 0 ? kAddressWidth * static_cast<std::size_t>(size) : 0);
  check(MPI_Gather(address.data(), kAddressWidth, MPI_CHAR, addresses.data(), kAddressWidth, MPI_CHAR, 0, world),
        "MPI_Gather");
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      nodes.topology_address.emplace_back(&addresses[kAddressWidth * static_cast<std::size_t>(r)]);
      nodes.local_rank_on_node.push_back(all[2 * static_cast<std::size_t>(r)]);
      nodes.launcher_local_rank.push_back(all[2 * static_cast<std::size_t>(r) + 1]);
      // A node's host is its first rank's.
      if (ids[static_cast<std::size_t>(r)] == r)
        nodes.hosts.emplace_back(&hosts[host.size() * static_cast<std::size_t>(r)]);
    }
  }
  return nodes;
}

}  // namespace pgroups::cli
