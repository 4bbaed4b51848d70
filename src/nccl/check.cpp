#include "check.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <iterator>
#include <string_view>

namespace pgroups::nccl::detail {

namespace {

// NCCL numbers its result codes 0, 1, ... up to ncclNumResults, in this order; each
// release so far only appended (ncclTimeout, 8, is in 2.30.7 and 2.32.3). A name past the
// count of the NCCL built against is never used, so one table serves every supported
// NCCL, and an NCCL with a code this table does not know stops the build here rather
// than reporting "ncclResult_t(9)" at run time.
constexpr std::string_view result_names[] = {
    "ncclSuccess",      "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError", "ncclInvalidArgument",
    "ncclInvalidUsage", "ncclRemoteError",        "ncclInProgress",  "ncclTimeout",
};
static_assert(static_cast<std::size_t>(ncclNumResults) <= std::size(result_names),
              "this NCCL has a result code that pgroups::nccl::detail::result_name does not know: "
              "add its enumerator name (nccl.h, ncclResult_t) to result_names");
static_assert(ncclSuccess == 0 && ncclUnhandledCudaError == 1 && ncclSystemError == 2 && ncclInternalError == 3 &&
                  ncclInvalidArgument == 4 && ncclInvalidUsage == 5 && ncclRemoteError == 6 && ncclInProgress == 7,
              "NCCL renumbered its result codes; result_names follows the old numbering");

}  // namespace

std::string result_name(ncclResult_t result) {
  const auto code = static_cast<int>(result);
  if (code >= 0 && code < static_cast<int>(ncclNumResults)) return std::string(result_names[code]);
  return fmt::format("ncclResult_t({})", code);
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
