#pragma once
// Private to the NCCL layer: the one place where NCCL and CUDA return codes become
// pgroups exceptions, and the polling that bounds non-blocking NCCL steps.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <thread>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/timeout.hpp"

namespace pgroups::nccl::detail {

/// The enumerator's name, e.g. "ncclInvalidArgument"; "ncclResult_t(42)" for unknown codes.
[[nodiscard]] std::string result_name(ncclResult_t result);

/// "<call> failed: <name>: <ncclGetErrorString>[; NCCL's last error: <ncclGetLastError>]".
/// `last_error` may be null or empty, in which case that part is left out.
[[nodiscard]] std::string nccl_error_message(std::string_view call, ncclResult_t result, const char* last_error);

/// "<call> failed: <cudaGetErrorName>: <cudaGetErrorString>".
[[nodiscard]] std::string cuda_error_message(std::string_view call, cudaError_t error);

/// Throws BackendError(nccl_error_message(...)) unless `result` is ncclSuccess, or
/// ncclInProgress when `in_progress_ok`. ncclGetLastError is read from `comm` (may be null).
void check_nccl(ncclResult_t result, std::string_view call, ncclComm_t comm = nullptr, bool in_progress_ok = false);

/// Throws BackendError(cuda_error_message(...)) unless `error` is cudaSuccess; clears
/// CUDA's last-error state first so that a handled failure does not resurface later.
void check_cuda(cudaError_t error, std::string_view call);

/// Calls `done()` until it returns true (then returns true) or `timeout` has passed
/// (then returns false); `done` may throw, which ends the wait. Sleeps between calls,
/// from 50 us doubling to 5 ms, so quick steps return quickly and long ones cost little
/// CPU. `done` is always called at least once.
template <class Done>
[[nodiscard]] bool poll_until(Done&& done, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = deadline_after(Clock::now(), timeout);
  std::chrono::microseconds pause{50};
  constexpr std::chrono::microseconds max_pause{5000};
  while (true) {
    if (done()) return true;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, max_pause);
  }
}

}  // namespace pgroups::nccl::detail
