#include "pgroups/mpi/strategy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <utility>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/mpi/check.hpp"

namespace pgroups::mpi {
namespace {

// An MPI_Group freed on every path, so that a failing create call leaks nothing.
class Group {
 public:
  explicit Group(MPI_Group group) noexcept : group_(group) {}
  ~Group() {
    if (group_ != MPI_GROUP_NULL && group_ != MPI_GROUP_EMPTY) MPI_Group_free(&group_);
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  [[nodiscard]] MPI_Group get() const noexcept { return group_; }

 private:
  MPI_Group group_;
};

Group group_of(const Communicator& parent) {
  MPI_Group group = MPI_GROUP_NULL;
  check(MPI_Comm_group(parent.get(), &group), "MPI_Comm_group");
  return Group(group);
}

// The parent's sub-group of `ranks` in this order: their order becomes the new
// communicator's rank order, which is why the ascending layout group gives rank ==
// local rank.
Group sub_group(const Group& parent, const std::vector<std::int64_t>& ranks) {
  std::vector<int> members(ranks.begin(), ranks.end());
  MPI_Group group = MPI_GROUP_NULL;
  check(MPI_Group_incl(parent.get(), static_cast<int>(members.size()), members.data(), &group), "MPI_Group_incl");
  return Group(group);
}

// Checks the contract shared by all strategies and returns the caller's global rank.
std::int64_t checked_rank(const Communicator& parent, const Layout& layout) {
  const int size = parent.size();
  if (size != layout.world_size()) {
    throw ConfigError(fmt::format("the parent communicator has {} ranks, but the layout is for a world of {}", size,
                                  layout.world_size()));
  }
  return parent.rank();
}

// The calling rank's group of `kind`, as a sub-group of the parent's; MPI_GROUP_EMPTY
// outside every group of a partial kind.
Group own_group(const Communicator& parent, const Layout& layout, std::size_t kind) {
  const std::int64_t rank = checked_rank(parent, layout);
  if (!layout.is_member(rank, kind)) return Group(MPI_GROUP_EMPTY);
  return sub_group(group_of(parent), layout.group_of(rank, kind));
}

int to_int(std::int64_t value) {
  // Every value passed here is a rank, a group index or a local rank of a world whose
  // size is an int (MPI_Comm_size), so this holds by construction.
  return static_cast<int>(value);
}

}  // namespace

Communicator create_by_comm_split(const Communicator& parent, const Layout& layout, std::size_t kind) {
  const std::int64_t rank = checked_rank(parent, layout);
  const bool member = layout.is_member(rank, kind);
  MPI_Comm comm = MPI_COMM_NULL;
  check(MPI_Comm_split(parent.get(), member ? to_int(layout.group_index(rank, kind)) : MPI_UNDEFINED,
                       member ? to_int(layout.local_rank(rank, kind)) : 0, &comm),
        "MPI_Comm_split");
  return Communicator::adopt(comm);
}

Communicator create_by_create_group(const Communicator& parent, const Layout& layout, std::size_t kind) {
  const Group own = own_group(parent, layout, kind);
  // Collective over the group only: a rank outside every group has nothing to call.
  if (own.get() == MPI_GROUP_EMPTY) return {};
  MPI_Comm comm = MPI_COMM_NULL;
  check(MPI_Comm_create_group(parent.get(), own.get(), create_group_tag(kind), &comm), "MPI_Comm_create_group");
  return Communicator::adopt(comm);
}

Communicator create_by_comm_create(const Communicator& parent, const Layout& layout, std::size_t kind) {
  const Group own = own_group(parent, layout, kind);
  MPI_Comm comm = MPI_COMM_NULL;
  check(MPI_Comm_create(parent.get(), own.get(), &comm), "MPI_Comm_create");
  return Communicator::adopt(comm);
}

Communicator create_by_per_group(const Communicator& parent, const Layout& layout, std::size_t kind) {
  const std::int64_t rank = checked_rank(parent, layout);
  const Group world = group_of(parent);
  // -1: outside every group of a partial kind, so no index matches.
  const std::int64_t own_index = layout.is_member(rank, kind) ? layout.group_index(rank, kind) : -1;
  const std::int64_t count = layout.group_count(kind);
  Communicator mine;
  for (std::int64_t index = 0; index < count; ++index) {
    const Group group = sub_group(world, layout.group_of(layout.group_leader(kind, index), kind));
    MPI_Comm comm = MPI_COMM_NULL;
    check(MPI_Comm_create(parent.get(), group.get(), &comm), "MPI_Comm_create");
    // Only the group's members get a handle; adopting it at once keeps it owned even if
    // a later iteration throws.
    Communicator created = Communicator::adopt(comm);
    if (own_index == index) mine = std::move(created);
  }
  return mine;
}

Communicator create_group_communicator(const Communicator& parent, const Layout& layout, std::size_t kind,
                                       CreationStrategy strategy) {
  // A kind whose groups are single ranks (data when the data-parallel size is 1, say)
  // needs no communication: every rank takes the same branch, since group sizes are
  // uniform within a kind. The baseline keeps Colossal-AI's behaviour and creates them.
  if (strategy != CreationStrategy::per_group && layout.group_size(kind) == 1) {
    const std::int64_t rank = checked_rank(parent, layout);
    if (!layout.is_member(rank, kind)) return {};
    MPI_Comm self = MPI_COMM_NULL;
    check(MPI_Comm_dup(MPI_COMM_SELF, &self), "MPI_Comm_dup(MPI_COMM_SELF)");
    return Communicator::adopt(self);
  }
  switch (strategy) {
    case CreationStrategy::comm_split: return create_by_comm_split(parent, layout, kind);
    case CreationStrategy::create_group: return create_by_create_group(parent, layout, kind);
    case CreationStrategy::per_group: return create_by_per_group(parent, layout, kind);
    case CreationStrategy::comm_create: return create_by_comm_create(parent, layout, kind);
  }
  throw ConfigError(fmt::format("unknown creation strategy {}", static_cast<int>(strategy)));
}

Communicator create_group_communicator(const Communicator& parent, const Layout& layout, ParallelMode mode,
                                       CreationStrategy strategy) {
  return create_group_communicator(parent, layout, layout.group_kind_index(mode_name(mode)), strategy);
}

}  // namespace pgroups::mpi
