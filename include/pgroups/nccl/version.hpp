#pragma once
/// \file
/// NCCL versions: the library loaded at run time and the header compiled against, which
/// can differ (a newer libnccl.so.2 on the library path); and the CUDA runtime and
/// driver versions beside them.

#include <string>

namespace pgroups::nccl {

/// The loaded library's version from ncclGetVersion, as "major.minor.patch", e.g.
/// "2.28.9". Throws BackendError when ncclGetVersion fails.
[[nodiscard]] std::string nccl_version();

/// The version of the nccl.h pgroups was compiled against, e.g. "2.28.9" (with
/// NCCL_SUFFIX appended when the header has one).
[[nodiscard]] std::string nccl_compile_version();

/// Formats an NCCL version code (NCCL_VERSION_CODE / ncclGetVersion): codes below
/// 10000 are the pre-2.9 encoding major*1000 + minor*100 + patch, later ones
/// major*10000 + minor*100 + patch. 22809 -> "2.28.9", 2708 -> "2.7.8".
[[nodiscard]] std::string format_nccl_version(int code);

/// Whether this build has ncclCommSplit (compiled against NCCL >= 2.18).
[[nodiscard]] bool split_available() noexcept;

/// Formats a CUDA version code (CUDART_VERSION, cudaRuntimeGetVersion,
/// cudaDriverGetVersion: major*1000 + minor*10): 13000 -> "13.0", 12040 -> "12.4".
[[nodiscard]] std::string format_cuda_version(int code);

/// The CUDA runtime pgroups runs with (cudaRuntimeGetVersion), e.g. "13.0"; empty when
/// the call fails. Needs no driver and no device. Never throws.
[[nodiscard]] std::string cuda_runtime_version() noexcept;

/// The newest CUDA version the installed driver supports (cudaDriverGetVersion), e.g.
/// "13.0"; empty when no driver is installed or the call fails. Never throws.
[[nodiscard]] std::string cuda_driver_version() noexcept;

}  // namespace pgroups::nccl
