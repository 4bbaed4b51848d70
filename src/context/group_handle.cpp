#include "pgroups/group_handle.hpp"

#include <fmt/format.h>

#include "pgroups/error.hpp"

namespace pgroups {
namespace {

std::string_view library(Backend backend) noexcept { return backend == Backend::mpi ? "MPI" : "NCCL"; }

[[noreturn]] void throw_wrong_kind(ParallelMode mode, Backend held, Backend asked) {
  throw StateError(fmt::format(
      "the group handle of mode {} holds an {} communicator (backend {}), not an {} one; {}", mode_name(mode),
      library(held), backend_name(held), library(asked),
      asked == Backend::mpi ? "get_cpu_group returns the MPI communicator whatever the context's backend"
                            : "get_group returns an NCCL communicator only when the context was built with backend "
                              "nccl"));
}

}  // namespace

MPI_Comm GroupHandle::mpi() const {
  if (const MPI_Comm* comm = std::get_if<MPI_Comm>(&comm_)) return *comm;
  throw_wrong_kind(mode_, backend(), Backend::mpi);
}

ncclComm_t GroupHandle::nccl() const {
  if (const ncclComm_t* comm = std::get_if<ncclComm_t>(&comm_)) return *comm;
  throw_wrong_kind(mode_, backend(), Backend::nccl);
}

}  // namespace pgroups
