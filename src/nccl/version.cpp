#include "pgroups/nccl/version.hpp"

#include <fmt/format.h>

#include "check.hpp"

namespace pgroups::nccl {

std::string format_nccl_version(int code) {
  // NCCL changed its encoding at 2.9 (see NCCL_VERSION in nccl.h); the old one gave
  // the minor version a single digit, so every old code is below 10000.
  if (code < 10000) return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
}

std::string nccl_version() {
  int code = 0;
  detail::check_nccl(ncclGetVersion(&code), "ncclGetVersion");
  return format_nccl_version(code);
}

std::string nccl_compile_version() {
#ifdef NCCL_SUFFIX
  return fmt::format("{}.{}.{}{}", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, NCCL_SUFFIX);
#else
  return fmt::format("{}.{}.{}", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
#endif
}

bool split_available() noexcept { return NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0); }

std::string format_cuda_version(int code) { return fmt::format("{}.{}", code / 1000, code % 1000 / 10); }

std::string cuda_runtime_version() noexcept {
  try {
    int code = 0;
    if (cudaRuntimeGetVersion(&code) != cudaSuccess || code <= 0) {
      (void)cudaGetLastError();
      return {};
    }
    return format_cuda_version(code);
  } catch (...) {  // only formatting can throw (bad_alloc): report "unknown"
    return {};
  }
}

std::string cuda_driver_version() noexcept {
  try {
    // 0 is how the runtime says "no driver installed".
    int code = 0;
    if (cudaDriverGetVersion(&code) != cudaSuccess || code <= 0) {
      (void)cudaGetLastError();
      return {};
    }
    return format_cuda_version(code);
  } catch (...) {  // only formatting can throw (bad_alloc): report "unknown"
    return {};
  }
}

}  // namespace pgroups::nccl
