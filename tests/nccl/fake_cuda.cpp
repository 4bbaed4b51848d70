// Definitions of the CUDA runtime entry points device binding calls; cuda_runtime_api.h
// declares them extern "C", which these definitions inherit.

#include "fake_cuda.hpp"

#include <cuda_runtime_api.h>

namespace fake_cuda {
namespace {

int visible = 2;
int current = -1;

}  // namespace

void set_visible_devices(int count) noexcept { visible = count; }

int current_device() noexcept { return current; }

void reset() noexcept {
  visible = 2;
  current = -1;
}

}  // namespace fake_cuda

cudaError_t cudaGetDeviceCount(int* count) {
  *count = fake_cuda::visible;
  return fake_cuda::visible > 0 ? cudaSuccess : cudaErrorNoDevice;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= fake_cuda::visible) return cudaErrorInvalidDevice;
  fake_cuda::current = device;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() { return cudaSuccess; }
