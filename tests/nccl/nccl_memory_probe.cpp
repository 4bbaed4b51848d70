// nccl_memory_probe: the device memory of each NCCL communicator one GPU can hold (issue
// 17's calibration), against the model of pgroups/cost/nccl_memory.hpp. One GPU is one
// NCCL rank, so it measures one-rank communicators: the world of a one-rank job, splits of
// it with and without splitShare, and a one-rank communicator made alone (what pgroups
// makes for a kind of one-rank groups when asked for). Each is measured by cudaMemGetInfo
// before creation, after creation, and after a first ncclAllReduce (NCCL allocates
// lazily; NCCL_RUNTIME_CONNECT decides how much). Prints one line per communicator and
// exits 0; exits 2 when no GPU is visible. Run by scripts/gpu-check.sh.

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "pgroups/cost/nccl_memory.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/nccl/communicator.hpp"

namespace {

double free_mib() {
  size_t free = 0;
  size_t total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return -1.0;
  return static_cast<double>(free) / (1024.0 * 1024.0);
}

// One ncclAllReduce of an int on the communicator, waited for.
bool first_collective(ncclComm_t comm) {
  int* buffer = nullptr;
  cudaStream_t stream = nullptr;
  bool ok = cudaMalloc(&buffer, sizeof(int)) == cudaSuccess && cudaStreamCreate(&stream) == cudaSuccess &&
            ncclAllReduce(buffer, buffer, 1, ncclInt, ncclSum, comm, stream) == ncclSuccess;
  ncclResult_t state = ncclInProgress;
  while (ok && state == ncclInProgress) ok = ncclCommGetAsyncError(comm, &state) == ncclSuccess;
  ok = ok && state == ncclSuccess && cudaStreamSynchronize(stream) == cudaSuccess;
  if (stream != nullptr) cudaStreamDestroy(stream);
  if (buffer != nullptr) cudaFree(buffer);
  return ok;
}

struct Row {
  std::string what;
  double model = 0.0;
  double created = 0.0;
  double after_collective = 0.0;
  bool ok = false;
};

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "nccl_memory_probe: no CUDA device is visible\n");
    return 2;
  }
  cudaSetDevice(0);
  const pgroups::NcclMemoryModel model;
  const char* runtime_connect = std::getenv("NCCL_RUNTIME_CONNECT");
  fmt::print("nccl_memory_probe: NCCL {}, NCCL_RUNTIME_CONNECT={}, sharing off (one communicator each)\n",
             NCCL_VERSION_CODE, runtime_connect ? runtime_connect : "(unset: NCCL's default)");
  const pgroups::nccl::Broadcast none = [](std::span<std::byte>) {};
  std::vector<Row> rows;
  try {
    for (const bool share : {true, false}) {
      pgroups::nccl::CommOptions options;
      options.split_share = share;
      double before = free_mib();
      pgroups::nccl::NcclCommunicator world = pgroups::nccl::create_world(1, 0, none, options);
      Row row{"world (1 rank)", model.one_rank_mib, before - free_mib(), 0.0, false};
      row.ok = first_collective(world.get());
      row.after_collective = before - free_mib();
      rows.push_back(row);
      std::vector<pgroups::nccl::NcclCommunicator> splits;
      for (int i = 0; i < 3; ++i) {
        before = free_mib();
        splits.push_back(pgroups::nccl::split_communicator(world, fmt::format("split{}", i), 0, 0, options));
        Row split{fmt::format("split {} of the world, splitShare {}", i + 1, share ? 1 : 0), model.one_rank_mib,
                  before - free_mib(), 0.0, false};
        split.ok = first_collective(splits.back().get());
        split.after_collective = before - free_mib();
        rows.push_back(split);
      }
      for (auto it = splits.rbegin(); it != splits.rend(); ++it) it->destroy();
      world.destroy();
    }
    const double before = free_mib();
    pgroups::nccl::NcclCommunicator alone = pgroups::nccl::init_communicator("one-rank kind", 1, 0, none, {});
    Row row{"one-rank communicator made alone", model.one_rank_mib, before - free_mib(), 0.0, false};
    row.ok = first_collective(alone.get());
    row.after_collective = before - free_mib();
    rows.push_back(row);
    alone.destroy();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "nccl_memory_probe: %s\n", error.what());
    return 1;
  }
  fmt::print("{:<40} {:>10} {:>14} {:>20}\n", "communicator", "model MiB", "created MiB", "after 1st coll. MiB");
  bool all_ok = true;
  for (const Row& row : rows) {
    fmt::print("{:<40} {:>10.0f} {:>14.1f} {:>20.1f}{}\n", row.what, row.model, row.created, row.after_collective,
               row.ok ? "" : "  (collective FAILED)");
    all_ok = all_ok && row.ok;
  }
  return all_ok ? 0 : 1;
}
