#include "pgroups/context/group_handle.hpp"

#include <fmt/format.h>

#include "pgroups/common/error.hpp"

namespace pgroups {
namespace {

std::string_view library(Backend backend) noexcept { return backend == Backend::mpi ? "MPI" : "NCCL"; }

[[noreturn]] void throw_wrong_kind(std::string_view group, Backend held, Backend asked) {
  throw StateError(fmt::format(
      "the group handle of group {} holds an {} communicator (backend {}), not an {} one; {}", group, library(held),
      backend_name(held), library(asked),
      asked == Backend::mpi ? "get_cpu_group returns the MPI communicator whatever the context's backend"
                            : "get_group returns an NCCL communicator only when the context was built with backend "
                              "nccl"));
}

}  // namespace

MPI_Comm GroupHandle::mpi() const {
  if (const MPI_Comm* comm = std::get_if<MPI_Comm>(&comm_)) return *comm;
  throw_wrong_kind(group_, backend(), Backend::mpi);
}

ncclComm_t GroupHandle::nccl() const {
  if (const ncclComm_t* comm = std::get_if<ncclComm_t>(&comm_)) return *comm;
  throw_wrong_kind(group_, backend(), Backend::nccl);
}

}  // namespace pgroups
