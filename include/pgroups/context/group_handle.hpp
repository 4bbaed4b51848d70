#pragma once
/// \file
/// GroupHandle: what ParallelContext::get_group and get_cpu_group return, a small
/// view of one group kind's communicator: an MPI communicator (Backend::mpi), an NCCL one
/// (Backend::nccl) or a gloo context (Backend::gloo). It owns none of them (a gloo
/// context is held by a shared pointer because gloo's collectives take one). Code that asks for `get_group("tp")` keeps
/// its type when the context's backend changes, and asks the handle for the kind it expects.
///
/// This header includes neither <nccl.h>, a CUDA header nor gloo's: ncclComm_t is
/// forward-declared exactly as nccl.h declares it, so the two can be included together
/// and the header compiles in builds without NCCL; ::gloo::Context is declared.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pgroups/context/backend.hpp"
#include "pgroups/context/mpi_comm.hpp"

struct ncclComm;
/// NCCL's opaque communicator handle (nccl.h: `typedef struct ncclComm* ncclComm_t`).
using ncclComm_t = ncclComm*;
namespace gloo {
class Context;
}  // namespace gloo

namespace pgroups {

class GroupHandle {
 public:
  GroupHandle(std::string_view group, MpiComm comm) : group_(group), comm_(std::in_place_type<MpiComm>, comm) {}
  GroupHandle(std::string_view group, ncclComm_t comm) : group_(group), comm_(std::in_place_type<ncclComm_t>, comm) {}
  GroupHandle(std::string_view group, std::shared_ptr<::gloo::Context> context)
      : group_(group), comm_(std::in_place_type<GlooContext>, std::move(context)) {}

  /// The group kind's name ("data", "tp-dp", ...), as the layout spells it.
  [[nodiscard]] const std::string& group() const noexcept { return group_; }
  /// Which kind of communicator the handle holds. O(1).
  [[nodiscard]] Backend backend() const noexcept {
    if (std::holds_alternative<MpiComm>(comm_)) return Backend::mpi;
    return std::holds_alternative<ncclComm_t>(comm_) ? Backend::nccl : Backend::gloo;
  }

  /// The MPI communicator. Valid until the context that handed it out is destroyed;
  /// the context owns it, so never free it. Throws StateError, naming the mode and the
  /// backend the handle has, when backend() is not Backend::mpi.
  [[nodiscard]] MpiComm mpi() const;
  /// The NCCL communicator, with the same lifetime and ownership. Throws StateError,
  /// naming the group and the backend the handle has, when backend() is not
  /// Backend::nccl.
  [[nodiscard]] ncclComm_t nccl() const;
  /// The gloo context, for gloo's collectives (::gloo::AllgatherOptions takes it): a copy
  /// of the shared pointer, so that it outlives the handle (get_group(kind).gloo() is a
  /// temporary's); use it while the context that handed it out lives. Throws StateError,
  /// naming the group and the backend the handle has, when backend() is not Backend::gloo.
  [[nodiscard]] std::shared_ptr<::gloo::Context> gloo() const;

  /// This rank's rank in the group and the group's size, asked of the communicator itself
  /// (MPI_Comm_rank and MPI_Comm_size, or the gloo context's), not of the layout: what a
  /// check of the groups compares with the layout, whatever the backend. StateError for an
  /// NCCL handle (a device communicator: get_cpu_group has the group's CPU side);
  /// BackendError when MPI fails.
  [[nodiscard]] int rank() const;
  [[nodiscard]] int size() const;
  /// Collective over the group: every member's `value`, by rank in the group, through the
  /// group's own communicator (MPI_Allgather, which MPI cannot bound: a caller that must
  /// not hang watches it; gloo's all-gather, bounded by the context's timeout, TimeoutError).
  /// StateError for an NCCL handle; BackendError when the library fails.
  [[nodiscard]] std::vector<std::int64_t> all_gather(std::int64_t value) const;

  friend bool operator==(const GroupHandle&, const GroupHandle&) = default;

 private:
  std::string group_;
  using GlooContext = std::shared_ptr<::gloo::Context>;
  std::variant<MpiComm, ncclComm_t, GlooContext> comm_;
};

}  // namespace pgroups
