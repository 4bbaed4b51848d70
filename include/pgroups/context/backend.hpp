#pragma once
/// \file
/// Backend: the library behind a communicator, and what this build of pgroups has of
/// each. MPI is always there when ParallelContext is (it bootstraps the jobs of the MPI
/// constructor and serves their CPU groups); NCCL only when pgroups was configured with
/// PGROUPS_WITH_NCCL=AUTO (and found CUDA and NCCL) or ON; gloo (CPU groups with no MPI,
/// on any bootstrap) when PGROUPS_WITH_GLOO=AUTO found libgloo-dev, or ON. The functions are defined in
/// pgroups::context, which knows how it was built, so their answers hold for the library the program links.

#include <array>
#include <cstdint>
#include <string_view>

namespace pgroups {

/// The library behind a communicator.
enum class Backend : std::uint8_t {
  mpi,   ///< MPI communicators (host memory)
  nccl,  ///< NCCL communicators (GPU memory), bootstrapped over MPI
  gloo,  ///< gloo contexts (host memory, TCP), connected over any bootstrap; no MPI needed
};

inline constexpr std::array<Backend, 3> kAllBackends = {Backend::mpi, Backend::nccl, Backend::gloo};

/// "mpi", "nccl" or "gloo". O(1). ConfigError naming the number for a value that is no
/// enumerator.
[[nodiscard]] std::string_view backend_name(Backend backend);

/// The backend with that exact name; ConfigError naming the value and the valid names
/// otherwise. It does not check that the backend was built (see require_backend_built).
[[nodiscard]] Backend parse_backend(std::string_view text);

/// Whether this build of pgroups has `backend`. O(1), no communication, no device query.
[[nodiscard]] bool backend_built(Backend backend) noexcept;

/// The CUDA devices visible to this process; 0, never an exception, when pgroups was
/// built without NCCL, or there is no driver, no device, or CUDA_VISIBLE_DEVICES hides
/// them all. The first call may initialise the CUDA runtime (milliseconds to a second).
[[nodiscard]] int visible_device_count() noexcept;

/// ConfigError when this build of pgroups lacks `backend`; the message names the
/// backend and the CMake option that enables it. Local, no communication.
void require_backend_built(Backend backend);

/// Throws, on this rank and without communicating, what a ParallelContext asked for
/// `backend` would throw before creating any communicator of it:
///  - ConfigError as require_backend_built;
///  - BackendError when the backend is NCCL and no CUDA device is visible.
/// Does nothing for MPI and gloo. A launcher can call it on every rank and agree on the outcome
/// before building a context (as `pgroups verify` does), so that a rank without a GPU
/// ends the job cleanly instead of through MPI_Abort.
void require_backend_usable(Backend backend);

}  // namespace pgroups
