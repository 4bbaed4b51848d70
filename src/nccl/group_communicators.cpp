#include "pgroups/nccl/group_communicators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>
#include <string>

#include "pgroups/layout/error.hpp"
#include "pgroups/nccl/version.hpp"

namespace pgroups::nccl {
namespace {

// What one kind's creation needs, computed for every kind before the first collective.
struct KindPlan {
  std::string group;
  std::size_t kind = 0;       // index in layout.group_kinds()
  std::optional<int> colour;  // the group's index among the kind's groups; none outside every group
  int key = 0;                // the rank's local rank in its group
  int size = 1;               // the group's size
};

int to_int(std::int64_t value, std::string_view group, std::string_view what) {
  if (value < 0 || value > INT_MAX) {
    throw ConfigError(fmt::format("{} {} of group {} does not fit NCCL's int (max {})", what, value, group, INT_MAX));
  }
  return static_cast<int>(value);
}

std::vector<KindPlan> plan_kinds(const Layout& layout, std::int64_t rank) {
  std::vector<KindPlan> plan;
  const auto kinds = layout.group_kinds();
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    if (kind == layout.world_kind()) continue;  // the world itself, handed in
    const std::string& name = kinds[kind].name;
    KindPlan step{.group = name,
                  .kind = kind,
                  .colour = std::nullopt,
                  .key = 0,
                  .size = to_int(layout.group_size(kind), name, "group size")};
    if (layout.is_member(rank, kind)) {
      step.colour = to_int(layout.group_index(rank, kind), name, "group index");
      step.key = to_int(layout.local_rank(rank, kind), name, "local rank");
    }
    plan.push_back(std::move(step));
  }
  return plan;
}

}  // namespace

GroupCommunicators& GroupCommunicators::operator=(GroupCommunicators&& other) noexcept {
  if (this != &other) {
    destroy_quietly();
    comms_ = std::move(other.comms_);
    other.comms_.clear();
  }
  return *this;
}

GroupCommunicators::~GroupCommunicators() { destroy_quietly(); }

bool GroupCommunicators::contains(std::string_view group) const noexcept {
  return std::any_of(comms_.begin(), comms_.end(), [group](const Entry& held) { return held.group == group; });
}

const GroupCommunicators::Entry& GroupCommunicators::entry(std::string_view group) const {
  for (const Entry& held : comms_) {
    if (held.group == group) return held.alias_of.empty() ? held : entry(held.alias_of);
  }
  throw StateError(
      fmt::format("there is no NCCL communicator for group {}: it was not created for this rank and "
                  "configuration",
                  group));
}

NcclCommunicator& GroupCommunicators::at(std::string_view group) {
  // One lookup for both overloads; *this is non-const here, so the cast is sound.
  return const_cast<NcclCommunicator&>(entry(group).comm);
}

const NcclCommunicator& GroupCommunicators::at(std::string_view group) const { return entry(group).comm; }

double GroupCommunicators::creation_seconds(std::string_view group) const {
  // An alias's own entry (0 s): the time was spent on its target's.
  for (const Entry& held : comms_) {
    if (held.group == group) return held.creation_seconds;
  }
  return entry(group).creation_seconds;  // throws StateError naming the kind
}

std::vector<std::string> GroupCommunicators::names() const {
  std::vector<std::string> names;
  names.reserve(comms_.size());
  for (const Entry& held : comms_) names.push_back(held.group);
  return names;
}

void GroupCommunicators::add(std::string group, NcclCommunicator comm, double creation_seconds) {
  if (contains(group)) throw StateError(fmt::format("an NCCL communicator for group {} is already held", group));
  comms_.push_back(Entry{std::move(group), std::move(comm), creation_seconds, {}});
}

void GroupCommunicators::alias(std::string group, std::string target) {
  if (contains(group)) throw StateError(fmt::format("an NCCL communicator for group {} is already held", group));
  const Entry& found = entry(target);  // StateError when the target is not held
  comms_.push_back(Entry{std::move(group), NcclCommunicator(), 0.0, found.group});
}

void GroupCommunicators::destroy() {
  while (!comms_.empty()) {
    try {
      comms_.back().comm.destroy();
    } catch (...) {
      comms_.pop_back();
      abort();
      throw;
    }
    comms_.pop_back();
  }
}

void GroupCommunicators::abort() noexcept {
  for (auto it = comms_.rbegin(); it != comms_.rend(); ++it) it->comm.abort();
  comms_.clear();
}

void GroupCommunicators::destroy_quietly() noexcept {
  try {
    destroy();
  } catch (...) {  // NOLINT(bugprone-empty-catch): destroy() aborted what it could not destroy
  }
}

GroupCommunicators create_group_communicators(NcclCommunicator world, const Layout& layout, std::int64_t rank,
                                              const CommOptions& options, const GroupBroadcast& group_broadcast,
                                              std::span<const KindSharing> sharing) {
  GroupCommunicators result;
  try {
    if (!world) throw StateError("group communicators need a world communicator, but the one given is empty");
    if (rank < 0 || rank >= layout.world_size()) {
      throw ConfigError(fmt::format("rank {} is outside the layout's world of {} ranks", rank, layout.world_size()));
    }
    const bool by_split = options.use_split && split_available();
    if (!by_split && !group_broadcast) {
      throw StateError(
          options.use_split
              ? fmt::format("group communicators must be created per group because pgroups was compiled against "
                            "NCCL {} (ncclCommSplit needs 2.18), and that needs a group broadcast; none was given",
                            nccl_compile_version())
              : std::string("group communicators are to be created per group (use_split = false), which needs a "
                            "group broadcast; none was given"));
    }
    const std::vector<KindPlan> plan = plan_kinds(layout, rank);
    const auto kinds = layout.group_kinds();
    if (!sharing.empty() && sharing.size() != kinds.size()) {
      throw StateError(
          fmt::format("the sharing has {} entries for a layout of {} kinds", sharing.size(), kinds.size()));
    }
    // Each owned communicator's name: every kind it serves.
    std::vector<std::string> served(kinds.size());
    for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
      const std::size_t owner =
          sharing.empty() || sharing[kind].source != CommSource::shared ? kind : sharing[kind].owner;
      served[owner] += (served[owner].empty() ? "" : ",") + kinds[kind].name;
    }
    const int world_size = world.size();
    const int world_rank = world.rank();
    if (world_size != layout.world_size() || world_rank != rank) {
      throw ConfigError(fmt::format(
          "the world communicator has {} ranks and this process is its rank {}, but the layout is for {} ranks and "
          "rank {}",
          world_size, world_rank, layout.world_size(), rank));
    }

    // Not "global" for a mesh: a dimension of that name is a kind of its own.
    const std::string world_name(world_key(layout));
    result.add(world_name, std::move(world));
    for (const KindPlan& step : plan) {
      const CommSource source = sharing.empty() ? CommSource::own : sharing[step.kind].source;
      if (source == CommSource::world) {
        result.alias(step.group, world_name);
        continue;
      }
      if (source == CommSource::shared) {
        result.alias(step.group, kinds[sharing[step.kind].owner].name);
        continue;
      }
      if (source == CommSource::singleton) continue;  // made when asked for, by this rank alone
      const auto start = std::chrono::steady_clock::now();
      if (!step.colour) {
        // Outside every group of a partial kind: the split is collective over the world,
        // so this rank takes part, asking for no communicator; the per-group path skips.
        if (by_split) split_out(result.at(world_name), step.group, options);
        continue;
      }
      // The parent is looked up each time: add() may move the communicators it holds.
      NcclCommunicator comm =
          by_split ? split_communicator(result.at(world_name), served[step.kind], *step.colour, step.key, options)
                   : init_communicator(
                         served[step.kind], step.size, step.key,
                         [&](std::span<std::byte> bytes) { group_broadcast(step.group, bytes); }, options);
      const int size = comm.size();
      const int local = comm.rank();
      if (size != step.size || local != step.key) {
        comm.abort();
        throw BackendError(fmt::format(
            "the NCCL communicator of group {} has {} ranks with this process at rank {}, but the layout puts it at "
            "local rank {} of a group of {}",
            step.group, size, local, step.key, step.size));
      }
      result.add(step.group, std::move(comm),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  } catch (...) {
    // Aborting (not destroying) lets peers that wait in the same step fail fast.
    result.abort();
    world.abort();
    throw;
  }
  return result;
}

}  // namespace pgroups::nccl
