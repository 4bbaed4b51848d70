// nccl_multirank_probe: real multi-rank NCCL on one GPU (docs/using/gpu-kit.md). Run under mpirun with
// 2 or more ranks and NCCL_MULTI_RANK_GPU_ENABLE=1 (NCCL refuses several ranks of one
// communicator on one device without it); scripts/gpu-check-multirank.sh does both.
//
// Every rank binds device (rank modulo the visible devices), then creates, timing each
// step as the slowest rank: the world (ncclCommInitRankConfig from an MPI-broadcast id),
// the two halves of the world by ncclCommSplit with splitShare 1 and 0, and the same
// halves each made on its own by ncclCommInitRankConfig (split against init). Each
// communicator is checked with an all-reduce of the global ranks, and its device memory
// read with ncclCommMemStats (NCCL 2.29+) beside the model of
// pgroups/cost/nccl_memory.hpp. Rank 0 prints one '|'-separated line per
// communicator, prefixed "row|", which the script gathers into its table.
//
// Exit status: 0 every check passed; 1 a check failed; 2 no GPU visible or fewer than 2
// ranks (nothing was measured; the script reports it as not run).

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pgroups/cost/nccl_memory.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/nccl/communicator.hpp"
#include "pgroups/nccl/mpi_bootstrap.hpp"
#include "pgroups/nccl/verify.hpp"

namespace {

struct Row {
  std::string what;
  int size = 0;
  double seconds = 0.0;      // slowest rank
  double nccl_mib = -1.0;    // ncclCommMemStats total on rank 0; < 0: not available
  double model_mib = 0.0;
  bool sum_ok = false;       // on every rank
};

// The model's figure for one communicator of `size` ranks on one node.
double model_mib(int size) {
  const pgroups::NcclMemoryModel model;
  if (size <= 1) return model.one_rank_mib;
  return size == 2 ? model.two_ranks_mib : model.larger_mib;
}

double nccl_memory_mib(ncclComm_t comm) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 29, 0)
  std::uint64_t bytes = 0;
  if (ncclCommMemStats(comm, ncclStatGpuMemTotal, &bytes) == ncclSuccess) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
  }
#else
  (void)comm;
#endif
  return -1.0;
}

double slowest(double seconds) {
  double max = 0.0;
  MPI_Allreduce(&seconds, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

bool everywhere(bool ok) {
  int local = ok ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// Times `create` as the slowest rank, then checks and measures what it made.
Row measure(const std::string& what, int size, std::int64_t expected_sum, int rank,
            const std::function<pgroups::nccl::NcclCommunicator()>& create,
            std::vector<pgroups::nccl::NcclCommunicator>& keep) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  pgroups::nccl::NcclCommunicator comm = create();
  Row row{what, size, slowest(MPI_Wtime() - start), nccl_memory_mib(comm.get()), model_mib(size), false};
  row.sum_ok = everywhere(pgroups::nccl::allreduce_rank_sum(comm, rank) == expected_sum);
  keep.push_back(std::move(comm));
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  if (!everywhere(devices > 0) || size < 2) {
    if (rank == 0) {
      std::fprintf(stderr, "nccl_multirank_probe: %s\n",
                   size < 2 ? "needs 2 or more ranks (mpirun -np N)" : "no CUDA device is visible");
    }
    MPI_Finalize();
    return 2;
  }
  int status = 0;
  std::vector<Row> rows;
  {
    // Destroyed before MPI_Finalize, in the same order on every rank.
    std::vector<pgroups::nccl::NcclCommunicator> comms;
    comms.reserve(8);  // `world` below refers into it
    try {
      if (cudaSetDevice(rank % devices) != cudaSuccess) throw std::runtime_error("cudaSetDevice failed");
      const int half = size / 2;
      const int colour = rank < half ? 0 : 1;
      const int half_size = colour == 0 ? half : size - half;
      const int first = colour == 0 ? 0 : half;
      const std::int64_t half_sum = static_cast<std::int64_t>(half_size) * (2 * first + half_size - 1) / 2;
      const std::int64_t world_sum = static_cast<std::int64_t>(size) * (size - 1) / 2;
      pgroups::nccl::CommOptions options;
      rows.push_back(measure(
          "world (init)", size, world_sum, rank,
          [&] {
            return pgroups::nccl::create_world(size, rank, pgroups::nccl::mpi_broadcast(MPI_COMM_WORLD), options);
          },
          comms));
      pgroups::nccl::NcclCommunicator& world = comms.front();
      for (const bool share : {true, false}) {
        pgroups::nccl::CommOptions split_options = options;
        split_options.split_share = share;
        rows.push_back(measure(
            fmt::format("halves (split, splitShare {})", share ? 1 : 0), half_size, half_sum, rank,
            [&] { return pgroups::nccl::split_communicator(world, "half", colour, rank, split_options); }, comms));
      }
      MPI_Comm half_comm = MPI_COMM_NULL;
      MPI_Comm_split(MPI_COMM_WORLD, colour, rank, &half_comm);
      int half_rank = 0;
      MPI_Comm_rank(half_comm, &half_rank);
      rows.push_back(measure(
          "halves (init)", half_size, half_sum, rank,
          [&] {
            return pgroups::nccl::init_communicator("half (init)", half_size, half_rank,
                                                    pgroups::nccl::mpi_broadcast(half_comm), options);
          },
          comms));
      for (auto it = comms.rbegin(); it != comms.rend(); ++it) it->destroy();
      MPI_Comm_free(&half_comm);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "nccl_multirank_probe: rank %d: %s\n", rank, error.what());
      for (auto it = comms.rbegin(); it != comms.rend(); ++it) it->abort();
      status = 1;
    }
  }
  if (!everywhere(status == 0)) {
    // A rank that failed may have left the others inside a collective: end the job.
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) {
    for (const Row& row : rows) {
      fmt::print("row|{}|{}|{}|{:.4f}|{}|{:.0f}|{}\n", size, row.what, row.size, row.seconds,
                 row.nccl_mib < 0 ? std::string("n/a (NCCL < 2.29)") : fmt::format("{:.1f}", row.nccl_mib),
                 row.model_mib, row.sum_ok ? "ok" : "WRONG SUM");
      if (!row.sum_ok) status = 1;
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return status;
}
