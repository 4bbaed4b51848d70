// NCCL and CUDA return codes become BackendError with the call and the libraries' own
// strings; non-blocking steps are bounded by a timeout. No GPU needed: the error
// strings are static tables in libnccl and libcudart.

#include "check.hpp"

#include <gtest/gtest.h>

#include <string>

#include "pgroups/layout/error.hpp"

namespace pgroups::nccl::detail {
namespace {

std::string backend_message(auto&& call) {
  try {
    call();
  } catch (const BackendError& error) {
    EXPECT_EQ(error.exit_code(), ExitCode::backend);
    return error.what();
  }
  return "no exception";
}

TEST(NcclErrorTranslation, MessageNamesCallResultAndNcclString) {
  const std::string message = nccl_error_message("ncclCommSplit of communicator '2d_row'", ncclInvalidArgument, nullptr);
  EXPECT_EQ(message, std::string("ncclCommSplit of communicator '2d_row' failed: ncclInvalidArgument: ") +
                         ncclGetErrorString(ncclInvalidArgument));
}

TEST(NcclErrorTranslation, MessageAppendsLastErrorWhenThereIsOne) {
  const std::string message = nccl_error_message("ncclCommInitRankConfig", ncclSystemError, "socket timed out");
  EXPECT_NE(message.find("ncclCommInitRankConfig failed: ncclSystemError: "), std::string::npos) << message;
  EXPECT_NE(message.find("; NCCL's last error: socket timed out"), std::string::npos) << message;
}

TEST(NcclErrorTranslation, EmptyLastErrorIsLeftOut) {
  EXPECT_EQ(nccl_error_message("x", ncclInternalError, "").find("last error"), std::string::npos);
}

TEST(NcclErrorTranslation, EveryResultHasItsEnumeratorName) {
  EXPECT_EQ(result_name(ncclSuccess), "ncclSuccess");
  EXPECT_EQ(result_name(ncclUnhandledCudaError), "ncclUnhandledCudaError");
  EXPECT_EQ(result_name(ncclRemoteError), "ncclRemoteError");
  EXPECT_EQ(result_name(ncclInProgress), "ncclInProgress");
  EXPECT_EQ(result_name(ncclNumResults), "ncclResult_t(8)");
}

TEST(NcclErrorTranslation, CheckThrowsBackendErrorWithTheCall) {
  const std::string message = backend_message([] { check_nccl(ncclInvalidUsage, "ncclCommCount of communicator 'data'"); });
  EXPECT_EQ(message.rfind("ncclCommCount of communicator 'data' failed: ncclInvalidUsage: ", 0), 0u) << message;
}

TEST(NcclErrorTranslation, CheckPassesSuccessAndInProgressOnlyWhenAllowed) {
  EXPECT_NO_THROW(check_nccl(ncclSuccess, "ncclGetVersion"));
  EXPECT_NO_THROW(check_nccl(ncclInProgress, "ncclCommSplit", nullptr, true));
  EXPECT_THROW(check_nccl(ncclInProgress, "ncclCommSplit"), BackendError);
}

TEST(NcclErrorTranslation, CudaMessageNamesCallErrorNameAndString) {
  EXPECT_EQ(cuda_error_message("cudaSetDevice(7)", cudaErrorInvalidDevice),
            std::string("cudaSetDevice(7) failed: cudaErrorInvalidDevice: ") +
                cudaGetErrorString(cudaErrorInvalidDevice));
  const std::string message = backend_message([] { check_cuda(cudaErrorMemoryAllocation, "cudaMalloc(8 bytes)"); });
  EXPECT_EQ(message.rfind("cudaMalloc(8 bytes) failed: cudaErrorMemoryAllocation: ", 0), 0u) << message;
  EXPECT_NO_THROW(check_cuda(cudaSuccess, "cudaFree"));
}

TEST(NcclPolling, ReturnsTrueOnceTheConditionHolds) {
  int calls = 0;
  EXPECT_TRUE(poll_until([&] { return ++calls == 4; }, std::chrono::seconds(10)));
  EXPECT_EQ(calls, 4);
}

TEST(NcclPolling, ReturnsFalseAfterTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  int calls = 0;
  EXPECT_FALSE(poll_until([&] { return ++calls < 0; }, std::chrono::milliseconds(20)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  EXPECT_GE(calls, 2);
}

TEST(NcclPolling, ZeroTimeoutStillAsksOnce) {
  int calls = 0;
  EXPECT_TRUE(poll_until([&] { return ++calls == 1; }, std::chrono::milliseconds(0)));
  EXPECT_EQ(calls, 1);
}

TEST(NcclPolling, AnExceptionFromTheConditionEndsTheWait) {
  EXPECT_THROW((void)poll_until([]() -> bool { throw BackendError("async error"); }, std::chrono::seconds(10)),
               BackendError);
}

}  // namespace
}  // namespace pgroups::nccl::detail
