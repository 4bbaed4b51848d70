#pragma once
// A scripted stand-in for the few CUDA runtime calls that device binding makes
// (cudaGetDeviceCount, cudaSetDevice, cudaGetLastError), linked into a test executable
// with fake_nccl.cpp so that ParallelContext's NCCL path runs on machines without a GPU.
// The executable's own definitions win over libcudart's; every other CUDA call still
// goes to the real runtime. One process plays one rank.

namespace fake_cuda {

/// Devices cudaGetDeviceCount reports from now on (0: none).
void set_visible_devices(int count) noexcept;
/// The device of the last successful cudaSetDevice; -1 before the first.
[[nodiscard]] int current_device() noexcept;
/// Back to two visible devices and no device set.
void reset() noexcept;

}  // namespace fake_cuda
