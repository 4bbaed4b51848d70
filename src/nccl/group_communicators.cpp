#include "pgroups/nccl/group_communicators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>
#include <string>
#include <utility>

#include "pgroups/common/error.hpp"
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
    world_ = std::move(other.world_);
    entries_ = std::move(other.entries_);
    where_ = std::move(other.where_);
    other.entries_.clear();
    other.where_.clear();
  }
  return *this;
}

GroupCommunicators::~GroupCommunicators() { destroy_quietly(); }

NcclCommunicator& GroupCommunicators::world() {
  // One check for both overloads; *this is non-const here, so the cast is sound.
  return const_cast<NcclCommunicator&>(std::as_const(*this).world());
}

const NcclCommunicator& GroupCommunicators::world() const {
  if (!world_) throw StateError("there is no NCCL world communicator: none was created, or it was destroyed");
  return world_;
}

const GroupCommunicators::Entry* GroupCommunicators::find(std::size_t kind) const noexcept {
  if (kind >= where_.size() || !where_[kind]) return nullptr;
  return &entries_[*where_[kind]];
}

const GroupCommunicators::Entry& GroupCommunicators::held(std::size_t kind) const {
  if (const Entry* entry = find(kind)) return *entry;
  throw StateError(fmt::format(
      "there is no NCCL communicator for group kind {}: it was not created for this rank and configuration", kind));
}

std::size_t GroupCommunicators::kind_named(std::string_view group) const {
  for (const Entry& entry : entries_) {
    if (entry.name == group) return entry.kind;
  }
  throw StateError(
      fmt::format("there is no NCCL communicator for group {}: it was not created for this rank and "
                  "configuration",
                  group));
}

const NcclCommunicator& GroupCommunicators::communicator(const Entry& entry) const {
  if (!entry.is_alias) return entry.comm;
  return entry.target ? communicator(held(*entry.target)) : world();
}

bool GroupCommunicators::contains(std::size_t kind) const noexcept { return find(kind) != nullptr; }

NcclCommunicator& GroupCommunicators::at(std::size_t kind) {
  return const_cast<NcclCommunicator&>(std::as_const(*this).at(kind));
}

const NcclCommunicator& GroupCommunicators::at(std::size_t kind) const { return communicator(held(kind)); }

double GroupCommunicators::creation_seconds(std::size_t kind) const { return held(kind).creation_seconds; }

std::vector<std::size_t> GroupCommunicators::kinds() const {
  std::vector<std::size_t> kinds;
  kinds.reserve(entries_.size());
  for (const Entry& entry : entries_) kinds.push_back(entry.kind);
  return kinds;
}

bool GroupCommunicators::contains(std::string_view group) const noexcept {
  return std::any_of(entries_.begin(), entries_.end(), [group](const Entry& entry) { return entry.name == group; });
}

NcclCommunicator& GroupCommunicators::at(std::string_view group) { return at(kind_named(group)); }

const NcclCommunicator& GroupCommunicators::at(std::string_view group) const { return at(kind_named(group)); }

double GroupCommunicators::creation_seconds(std::string_view group) const {
  return creation_seconds(kind_named(group));
}

std::vector<std::string> GroupCommunicators::names() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const Entry& entry : entries_) names.push_back(entry.name);
  return names;
}

void GroupCommunicators::set_world(NcclCommunicator world) {
  if (world_) throw StateError("an NCCL world communicator is already held");
  world_ = std::move(world);
}

void GroupCommunicators::append(Entry entry) {
  if (contains(entry.kind) || contains(entry.name)) {
    throw StateError(fmt::format("an NCCL communicator for group {} is already held", entry.name));
  }
  if (entry.kind >= where_.size()) where_.resize(entry.kind + 1);
  where_[entry.kind] = entries_.size();
  entries_.push_back(std::move(entry));
}

void GroupCommunicators::add(std::size_t kind, std::string name, NcclCommunicator comm, double creation_seconds) {
  append(Entry{kind, std::move(name), std::move(comm), creation_seconds, false, std::nullopt});
}

void GroupCommunicators::alias(std::size_t kind, std::string name, std::optional<std::size_t> target) {
  if (target) {
    (void)held(*target);  // StateError when the target is not held
  } else {
    (void)world();  // StateError when there is no world
  }
  append(Entry{kind, std::move(name), NcclCommunicator(), 0.0, true, target});
}

void GroupCommunicators::destroy() {
  while (!entries_.empty() || world_) {
    try {
      if (!entries_.empty()) {
        entries_.back().comm.destroy();  // an alias's is empty: nothing to do
      } else {
        world_.destroy();
      }
    } catch (...) {
      if (!entries_.empty()) entries_.pop_back();
      abort();
      throw;
    }
    if (!entries_.empty()) {
      where_[entries_.back().kind].reset();
      entries_.pop_back();
    } else {
      world_ = NcclCommunicator();
    }
  }
}

void GroupCommunicators::abort() noexcept {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) it->comm.abort();
  world_.abort();
  entries_.clear();
  where_.clear();
  world_ = NcclCommunicator();
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

    result.set_world(std::move(world));
    // The layout's world kind (the presets' `global`) is the world itself.
    if (const std::optional<std::size_t> world_kind = layout.world_kind()) {
      result.alias(*world_kind, kinds[*world_kind].name, std::nullopt);
    }
    for (const KindPlan& step : plan) {
      const CommSource source = sharing.empty() ? CommSource::own : sharing[step.kind].source;
      if (source == CommSource::world) {
        result.alias(step.kind, step.group, std::nullopt);
        continue;
      }
      if (source == CommSource::shared) {
        result.alias(step.kind, step.group, sharing[step.kind].owner);
        continue;
      }
      if (source == CommSource::singleton) continue;  // made when asked for, by this rank alone
      const auto start = std::chrono::steady_clock::now();
      if (!step.colour) {
        // Outside every group of a partial kind: the split is collective over the world,
        // so this rank takes part, asking for no communicator; the per-group path skips.
        if (by_split) split_out(result.world(), step.group, options);
        continue;
      }
      NcclCommunicator comm =
          by_split ? split_communicator(result.world(), served[step.kind], *step.colour, step.key, options)
                   : init_communicator(
                         served[step.kind], step.size, step.key,
                         [&](std::span<std::byte> bytes) { group_broadcast(step.kind, bytes); }, options);
      const int size = comm.size();
      const int local = comm.rank();
      if (size != step.size || local != step.key) {
        comm.abort();
        throw BackendError(fmt::format(
            "the NCCL communicator of group {} has {} ranks with this process at rank {}, but the layout puts it at "
            "local rank {} of a group of {}",
            step.group, size, local, step.key, step.size));
      }
      result.add(step.kind, step.group, std::move(comm),
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
