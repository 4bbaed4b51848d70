#include "pgroups/context/group_handle.hpp"

#include <fmt/format.h>

#include "pgroups/common/error.hpp"

#if PGROUPS_CONTEXT_WITH_MPI
#include "pgroups/mpi/check.hpp"
#endif
#if PGROUPS_CONTEXT_WITH_GLOO
#include "pgroups/gloo/gloo_groups.hpp"
#endif

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

[[noreturn]] void throw_no_cpu_side(std::string_view group) {
  throw StateError(
      fmt::format("the group handle of group {} holds an NCCL communicator, which answers no CPU query: ask "
                  "get_cpu_group(\"{}\") for the group's rank, size and all-gather",
                  group, group));
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

// Each query dispatches on what the handle holds; a backend this build lacks never made
// a handle, so its branch is left out with the library.
int GroupHandle::rank() const {
  int rank = 0;
#if PGROUPS_CONTEXT_WITH_MPI
  if (const MpiComm* comm = std::get_if<MpiComm>(&comm_)) mpi::check(MPI_Comm_rank(*comm, &rank), "MPI_Comm_rank");
#endif
#if PGROUPS_CONTEXT_WITH_GLOO
  if (const GlooContext* context = std::get_if<GlooContext>(&comm_)) rank = gloo::rank_in(**context);
#endif
  if (backend() == Backend::nccl) throw_no_cpu_side(group_);
  return rank;
}

int GroupHandle::size() const {
  int size = 1;
#if PGROUPS_CONTEXT_WITH_MPI
  if (const MpiComm* comm = std::get_if<MpiComm>(&comm_)) mpi::check(MPI_Comm_size(*comm, &size), "MPI_Comm_size");
#endif
#if PGROUPS_CONTEXT_WITH_GLOO
  if (const GlooContext* context = std::get_if<GlooContext>(&comm_)) size = gloo::size_of(**context);
#endif
  if (backend() == Backend::nccl) throw_no_cpu_side(group_);
  return size;
}

std::vector<std::int64_t> GroupHandle::all_gather(std::int64_t value) const {
  std::vector<std::int64_t> values;
#if PGROUPS_CONTEXT_WITH_MPI
  if (const MpiComm* comm = std::get_if<MpiComm>(&comm_)) {
    values.resize(static_cast<std::size_t>(size()));
    mpi::check(MPI_Allgather(&value, 1, MPI_INT64_T, values.data(), 1, MPI_INT64_T, *comm), "MPI_Allgather");
  }
#endif
#if PGROUPS_CONTEXT_WITH_GLOO
  if (const GlooContext* context = std::get_if<GlooContext>(&comm_)) values = gloo::all_gather(*context, value);
#endif
  if (backend() == Backend::nccl) throw_no_cpu_side(group_);
  return values;
}

}  // namespace pgroups
