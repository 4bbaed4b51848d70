#include "check.hpp"

#include <fmt/format.h>

namespace pgroups::nccl::detail {

std::string result_name(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: break;
  }
  return fmt::format("ncclResult_t({})", static_cast<int>(result));
}

std::string nccl_error_message(std::string_view call, ncclResult_t result, const char* last_error) {
  const char* description = ncclGetErrorString(result);
  std::string message = fmt::format("{} failed: {}: {}", call, result_name(result),
                                    description != nullptr ? description : "unknown error");
  if (last_error != nullptr && *last_error != '\0') {
    message += fmt::format("; NCCL's last error: {}", last_error);
  }
  return message;
}

std::string cuda_error_message(std::string_view call, cudaError_t error) {
  const char* name = cudaGetErrorName(error);
  const char* description = cudaGetErrorString(error);
  return fmt::format("{} failed: {}: {}", call, name != nullptr ? name : "cudaError",
                     description != nullptr ? description : "unknown error");
}

void check_nccl(ncclResult_t result, std::string_view call, ncclComm_t comm, bool in_progress_ok) {
  if (result == ncclSuccess || (in_progress_ok && result == ncclInProgress)) return;
  throw BackendError(nccl_error_message(call, result, ncclGetLastError(comm)));
}

void check_cuda(cudaError_t error, std::string_view call) {
  if (error == cudaSuccess) return;
  // Most CUDA errors are also recorded as the thread's last error; reading it resets
  // that, so a later unrelated cudaGetLastError does not report this one again.
  (void)cudaGetLastError();
  throw BackendError(cuda_error_message(call, error));
}

}  // namespace pgroups::nccl::detail
