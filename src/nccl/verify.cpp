#include "pgroups/nccl/verify.hpp"

#include <fmt/format.h>

#include <numeric>
#include <optional>
#include <string>

#include "check.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/launch/timeout.hpp"

namespace pgroups::nccl {
namespace {

// Every failure inside allreduce_rank_sum aborts the communicator before the buffer and
// stream below are released: cudaFree and cudaStreamDestroy wait for a stuck NCCL kernel,
// an abort ends it.
class Failure {
 public:
  explicit Failure(NcclCommunicator& comm) : comm_(comm) {}
  void cuda(cudaError_t error, std::string_view call) const {
    if (error == cudaSuccess) return;
    (void)cudaGetLastError();
    comm_.abort();
    throw BackendError(detail::cuda_error_message(call, error));
  }
  [[noreturn]] void nccl(ncclResult_t result, std::string_view call) const {
    std::string message = detail::nccl_error_message(call, result, ncclGetLastError(comm_.get()));
    comm_.abort();
    throw BackendError(message);
  }

 private:
  NcclCommunicator& comm_;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (pointer_ != nullptr) (void)cudaFree(pointer_);
  }
  void** out() noexcept { return &pointer_; }
  [[nodiscard]] void* get() const noexcept { return pointer_; }

 private:
  void* pointer_ = nullptr;
};

class Stream {
 public:
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  cudaStream_t* out() noexcept { return &stream_; }
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Makes the communicator's device current for the check and restores the caller's.
class CurrentDevice {
 public:
  CurrentDevice(int device, const Failure& fail) {
    fail.cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) fail.cuda(cudaSetDevice(device), fmt::format("cudaSetDevice({})", device));
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;
  ~CurrentDevice() { (void)cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

}  // namespace

std::int64_t allreduce_rank_sum(NcclCommunicator& comm, std::int64_t global_rank) {
  if (!comm) throw StateError("allreduce_rank_sum needs a communicator, but the one given is empty");
  const Failure fail(comm);
  const std::string step = fmt::format("ncclAllReduce of the rank sum on communicator '{}'", comm.name());
  const CurrentDevice current(comm.device(), fail);

  Stream stream;
  fail.cuda(cudaStreamCreateWithFlags(stream.out(), cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  DeviceBuffer buffer;
  fail.cuda(cudaMalloc(buffer.out(), sizeof(std::int64_t)), "cudaMalloc(8 bytes)");
  std::int64_t value = global_rank;
  fail.cuda(cudaMemcpyAsync(buffer.get(), &value, sizeof value, cudaMemcpyHostToDevice, stream.get()),
            "cudaMemcpyAsync (host to device)");

  const ncclResult_t enqueued =
      ncclAllReduce(buffer.get(), buffer.get(), 1, ncclInt64, ncclSum, comm.get(), stream.get());
  if (enqueued == ncclInProgress) {
    comm.wait_ready(step);  // a non-blocking communicator may still be enqueueing
  } else if (enqueued != ncclSuccess) {
    fail.nccl(enqueued, step);
  }

  // Wait for the stream by polling, so that a peer that never joins costs a timeout,
  // not a hang; an asynchronous NCCL error ends the wait early.
  const bool finished = detail::poll_until(
      [&] {
        const cudaError_t query = cudaStreamQuery(stream.get());
        if (query == cudaSuccess) return true;
        if (query != cudaErrorNotReady) fail.cuda(query, "cudaStreamQuery");
        ncclResult_t state = ncclSuccess;
        const ncclResult_t asked = ncclCommGetAsyncError(comm.get(), &state);
        if (asked != ncclSuccess) fail.nccl(asked, "ncclCommGetAsyncError");
        if (state != ncclSuccess && state != ncclInProgress) fail.nccl(state, step);
        return false;
      },
      wait_limit(comm.timeout()));
  if (!finished) {
    comm.abort();
    throw TimeoutError(timeout_message(comm.timeout(), step) + "; the communicator was aborted");
  }
  fail.cuda(cudaMemcpy(&value, buffer.get(), sizeof value, cudaMemcpyDeviceToHost), "cudaMemcpy (device to host)");
  return value;
}

std::int64_t expected_rank_sum(const Layout& layout, std::int64_t rank, std::size_t kind) {
  const std::vector<std::int64_t> members = layout.group_of(rank, kind);
  return std::accumulate(members.begin(), members.end(), std::int64_t{0});
}

std::int64_t expected_rank_sum(const Layout& layout, std::int64_t rank, std::string_view group) {
  return expected_rank_sum(layout, rank, layout.group_kind_index(group));
}

std::vector<GroupCheck> verify_rank_sums(GroupCommunicators& comms, const Layout& layout, std::int64_t rank) {
  std::vector<GroupCheck> checks;
  // The world first, under the name of the group every rank is in; the layout's own world
  // kind (the presets' `global`) is that communicator, checked once.
  const std::int64_t w = layout.world_size();
  checks.push_back(GroupCheck{.kind = std::string(kWorldCheckName),
                              .expected = w * (w - 1) / 2,
                              .actual = allreduce_rank_sum(comms.world(), rank)});
  const std::optional<std::size_t> world_kind = layout.world_kind();
  for (const std::size_t kind : comms.kinds()) {
    if (kind == world_kind) continue;
    checks.push_back(GroupCheck{.kind = layout.group_kinds()[kind].name,
                                .expected = expected_rank_sum(layout, rank, kind),
                                .actual = allreduce_rank_sum(comms.at(kind), rank)});
  }
  return checks;
}

}  // namespace pgroups::nccl
