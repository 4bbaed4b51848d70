#include "pgroups/context/group_handle.hpp"

#include <fmt/format.h>

#include "pgroups/common/error.hpp"

namespace pgroups {
namespace {

// What a handle of the backend holds, with its article: "an MPI communicator".
std::string_view held_thing(Backend backend) noexcept {
  switch (backend) {
    case Backend::mpi: return "an MPI communicator";
    case Backend::nccl: return "an NCCL communicator";
    case Backend::gloo: return "a gloo context";
  }
  return "a communicator";
}

std::string_view library(Backend backend) noexcept {
  switch (backend) {
    case Backend::mpi: return "an MPI";
    case Backend::nccl: return "an NCCL";
    case Backend::gloo: return "a gloo";
  }
  return "a";
}

[[noreturn]] void throw_wrong_kind(std::string_view group, Backend held, Backend asked) {
  throw StateError(fmt::format(
      "the group handle of group {} holds {} (backend {}), not {} one; {}", group, held_thing(held), backend_name(held),
      library(asked),
      asked == Backend::mpi ? std::string("get_cpu_group returns the MPI communicator whatever the context's backend, "
                                          "when the context was built over MPI")
                            : fmt::format("get_group returns {} only when the context was built with backend {}",
                                          held_thing(asked), backend_name(asked))));
}

}  // namespace

MpiComm GroupHandle::mpi() const {
  if (const MpiComm* comm = std::get_if<MpiComm>(&comm_)) return *comm;
  throw_wrong_kind(group_, backend(), Backend::mpi);
}

ncclComm_t GroupHandle::nccl() const {
  if (const ncclComm_t* comm = std::get_if<ncclComm_t>(&comm_)) return *comm;
  throw_wrong_kind(group_, backend(), Backend::nccl);
}

std::shared_ptr<::gloo::Context> GroupHandle::gloo() const {
  if (const GlooContext* context = std::get_if<GlooContext>(&comm_)) return *context;
  throw_wrong_kind(group_, backend(), Backend::gloo);
}

}  // namespace pgroups
