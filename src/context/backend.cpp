#include "pgroups/context/backend.hpp"

#include <fmt/format.h>

#include "../common/did_you_mean.hpp"
#include "pgroups/common/error.hpp"

#ifdef PGROUPS_HAVE_NCCL
#include "pgroups/nccl/device.hpp"
#endif

namespace pgroups {
namespace {

constexpr std::string_view kBackendNames[] = {"mpi", "nccl", "gloo"};

// How to get a backend this build lacks.
std::string_view how_to_build(Backend backend) {
  return backend == Backend::gloo ? "-DPGROUPS_WITH_GLOO=ON (it needs gloo: Debian's libgloo-dev)"
                                  : "-DPGROUPS_WITH_NCCL=ON (it needs the CUDA toolkit and NCCL 2.14 or later; set "
                                    "NCCL_ROOT to find them)";
}

}  // namespace

std::string_view backend_name(Backend backend) {
  switch (backend) {
    case Backend::mpi: return "mpi";
    case Backend::nccl: return "nccl";
    case Backend::gloo: return "gloo";
  }
  throw ConfigError(fmt::format("Backend {} is not a backend: the backends are 0 (mpi), 1 (nccl) and 2 (gloo)",
                                static_cast<int>(backend)));
}

Backend parse_backend(std::string_view text) {
  for (Backend backend : kAllBackends) {
    if (backend_name(backend) == text) return backend;
  }
  throw ConfigError(fmt::format("unknown backend '{}'; the backend must be one of mpi, nccl, gloo{}", text,
                                detail::did_you_mean(text, kBackendNames)));
}

bool backend_built(Backend backend) noexcept {
  switch (backend) {
    case Backend::mpi: return true;
#ifdef PGROUPS_HAVE_NCCL
    case Backend::nccl: return true;
#endif
#ifdef PGROUPS_HAVE_GLOO
    case Backend::gloo: return true;
#endif
    default: return false;
  }
}

int visible_device_count() noexcept {
#ifdef PGROUPS_HAVE_NCCL
  return nccl::visible_gpu_count();
#else
  return 0;
#endif
}

void require_backend_built(Backend backend) {
  if (backend_built(backend)) return;
  throw ConfigError(fmt::format(
      "backend {} was requested, but this build of pgroups has no {} backend; reconfigure with {} and rebuild, or "
      "use backend mpi",
      backend_name(backend), backend_name(backend), how_to_build(backend)));
}

void require_backend_usable(Backend backend) {
  require_backend_built(backend);
  if (backend != Backend::nccl) return;
  const int devices = visible_device_count();
  if (devices < 1) {
    throw BackendError(fmt::format(
        "backend {} needs a CUDA device, but none is visible to this process (the CUDA runtime reports {} devices; "
        "check the driver, the GPUs given to the job and CUDA_VISIBLE_DEVICES), or use backend mpi",
        backend_name(backend), devices));
  }
}

}  // namespace pgroups
