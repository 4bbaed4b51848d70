#pragma once
/// \file
/// GroupHandle: what ParallelContext::get_group and get_cpu_group return, a small
/// non-owning view of one mode's communicator. Today every handle holds an MPI
/// communicator; a device backend adds its own communicator type as another Backend,
/// so that code asking for `get_group(mode)` keeps its type when the backend changes.

#include <cstdint>

#include "pgroups/mpi/communicator.hpp"  // MPI_Comm, through the MPI backend
#include "pgroups/parallel_mode.hpp"

namespace pgroups {

/// The library behind a communicator.
enum class Backend : std::uint8_t { mpi };

class GroupHandle {
 public:
  GroupHandle(ParallelMode mode, MPI_Comm comm) noexcept : mode_(mode), mpi_(comm) {}

  [[nodiscard]] ParallelMode mode() const noexcept { return mode_; }
  [[nodiscard]] Backend backend() const noexcept { return backend_; }

  /// The MPI communicator. Valid until the context that handed it out is destroyed;
  /// the context owns it, so never free it.
  [[nodiscard]] MPI_Comm mpi() const noexcept { return mpi_; }

  friend bool operator==(const GroupHandle&, const GroupHandle&) = default;

 private:
  ParallelMode mode_;
  Backend backend_ = Backend::mpi;
  MPI_Comm mpi_;
};

}  // namespace pgroups
