// NCCL and CUDA return codes become BackendError with the call and the libraries' own
// strings; non-blocking steps are bounded by a timeout. No GPU needed: the error
// strings are static tables in libnccl and libcudart.

#include "check.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "pgroups/common/error.hpp"

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
  const std::string message =
      nccl_error_message("ncclCommSplit of communicator '2d_row'", ncclInvalidArgument, nullptr);
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
  EXPECT_EQ(result_name(ncclNumResults), "ncclResult_t(" + std::to_string(static_cast<int>(ncclNumResults)) + ")");
  EXPECT_EQ(result_name(static_cast<ncclResult_t>(-1)), "ncclResult_t(-1)");
}

// Every enumerator of ncclResult_t in the very nccl.h this was built against (read at
// run time, so a code that a newer NCCL adds is listed here by name, not by number):
// result_name gives each its own name, and there are exactly ncclNumResults of them.
TEST(NcclErrorTranslation, EveryResultCodeOfTheBuiltAgainstNcclHeaderHasItsName) {
  std::ifstream in(PGROUPS_NCCL_HEADER);
  ASSERT_TRUE(in) << "cannot read " << PGROUPS_NCCL_HEADER;
  const std::string header((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch block;
  ASSERT_TRUE(std::regex_search(header, block, std::regex(R"(typedef\s+enum\s*\{([^}]*)\}\s*ncclResult_t\s*;)")))
      << "no ncclResult_t enum in " << PGROUPS_NCCL_HEADER;
  const std::string body = block[1].str();
  const std::regex enumerator(R"((nccl\w+)\s*=\s*(\d+))");
  int codes = 0;
  bool saw_count = false;
  for (std::sregex_iterator it(body.begin(), body.end(), enumerator), end; it != end; ++it) {
    const std::string name = (*it)[1].str();
    const int value = std::stoi((*it)[2].str());
    if (name == "ncclNumResults") {
      saw_count = true;
      EXPECT_EQ(value, static_cast<int>(ncclNumResults));
      continue;
    }
    ++codes;
    EXPECT_EQ(result_name(static_cast<ncclResult_t>(value)), name) << "code " << value << " of " << PGROUPS_NCCL_HEADER;
    const char* description = ncclGetErrorString(static_cast<ncclResult_t>(value));
    EXPECT_TRUE(description != nullptr && *description != '\0') << name;
  }
  EXPECT_TRUE(saw_count) << "no ncclNumResults in " << PGROUPS_NCCL_HEADER;
  EXPECT_EQ(codes, static_cast<int>(ncclNumResults)) << "enumerators found in " << PGROUPS_NCCL_HEADER;
  EXPECT_GE(codes, 8) << "ncclSuccess .. ncclInProgress at least";
}

TEST(NcclErrorTranslation, CheckThrowsBackendErrorWithTheCall) {
  const std::string message =
      backend_message([] { check_nccl(ncclInvalidUsage, "ncclCommCount of communicator 'data'"); });
  EXPECT_EQ(message.rfind("ncclCommCount of communicator 'data' failed: ncclInvalidUsage: ", 0), 0u) << message;
}

TEST(NcclErrorTranslation, CheckPassesSuccessAndInProgressOnlyWhenAllowed) {
  EXPECT_NO_THROW(check_nccl(ncclSuccess, "ncclGetVersion"));
  EXPECT_NO_THROW(check_nccl(ncclInProgress, "ncclCommSplit", nullptr, true));
  EXPECT_THROW(check_nccl(ncclInProgress, "ncclCommSplit"), BackendError);
}

TEST(NcclErrorTranslation, CudaMessageNamesCallErrorNameAndString) {
  EXPECT_EQ(
      cuda_error_message("cudaSetDevice(7)", cudaErrorInvalidDevice),
      std::string("cudaSetDevice(7) failed: cudaErrorInvalidDevice: ") + cudaGetErrorString(cudaErrorInvalidDevice));
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
