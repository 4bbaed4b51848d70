#include "pgroups/nccl/mode_communicators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <string>

#include "pgroups/error.hpp"
#include "pgroups/nccl/version.hpp"

namespace pgroups::nccl {
namespace {

// What one mode's creation needs, computed for every mode before the first collective.
struct ModePlan {
  ParallelMode mode = ParallelMode::global;
  int colour = 0;  // the group's index among the mode's groups
  int key = 0;     // the rank's local rank in its group
  int size = 1;    // the group's size
};

int to_int(std::int64_t value, ParallelMode mode, std::string_view what) {
  if (value < 0 || value > INT_MAX) {
    throw ConfigError(fmt::format("{} {} of mode {} does not fit NCCL's int (max {})", what, value,
                                  mode_name(mode), INT_MAX));
  }
  return static_cast<int>(value);
}

std::vector<ModePlan> plan_modes(const Layout& layout, std::int64_t rank) {
  std::vector<ModePlan> plan;
  for (ParallelMode mode : layout.modes()) {
    if (mode == ParallelMode::global) continue;
    plan.push_back(ModePlan{
        .mode = mode,
        .colour = to_int(layout.group_index(rank, mode), mode, "group index"),
        .key = to_int(layout.local_rank(rank, mode), mode, "local rank"),
        .size = to_int(layout.group_size(mode), mode, "group size"),
    });
  }
  return plan;
}

}  // namespace

ModeCommunicators& ModeCommunicators::operator=(ModeCommunicators&& other) noexcept {
  if (this != &other) {
    destroy_quietly();
    comms_ = std::move(other.comms_);
    other.comms_.clear();
  }
  return *this;
}

ModeCommunicators::~ModeCommunicators() { destroy_quietly(); }

bool ModeCommunicators::contains(ParallelMode mode) const noexcept {
  return std::any_of(comms_.begin(), comms_.end(), [mode](const Entry& held) { return held.mode == mode; });
}

const ModeCommunicators::Entry& ModeCommunicators::entry(ParallelMode mode) const {
  for (const Entry& held : comms_) {
    if (held.mode == mode) return held;
  }
  throw StateError(fmt::format("there is no NCCL communicator for mode {}: it was not created for this configuration",
                               mode_name(mode)));
}

NcclCommunicator& ModeCommunicators::at(ParallelMode mode) {
  // One lookup for both overloads; *this is non-const here, so the cast is sound.
  return const_cast<NcclCommunicator&>(entry(mode).comm);
}

const NcclCommunicator& ModeCommunicators::at(ParallelMode mode) const { return entry(mode).comm; }

double ModeCommunicators::creation_seconds(ParallelMode mode) const { return entry(mode).creation_seconds; }

std::vector<ParallelMode> ModeCommunicators::modes() const {
  std::vector<ParallelMode> modes;
  modes.reserve(comms_.size());
  for (const Entry& held : comms_) modes.push_back(held.mode);
  return modes;
}

void ModeCommunicators::add(ParallelMode mode, NcclCommunicator comm, double creation_seconds) {
  if (contains(mode)) {
    throw StateError(fmt::format("an NCCL communicator for mode {} is already held", mode_name(mode)));
  }
  comms_.push_back(Entry{mode, std::move(comm), creation_seconds});
}

void ModeCommunicators::destroy() {
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

void ModeCommunicators::abort() noexcept {
  for (auto it = comms_.rbegin(); it != comms_.rend(); ++it) it->comm.abort();
  comms_.clear();
}

void ModeCommunicators::destroy_quietly() noexcept {
  try {
    destroy();
  } catch (...) {  // NOLINT(bugprone-empty-catch): destroy() aborted what it could not destroy
  }
}

ModeCommunicators create_mode_communicators(NcclCommunicator world, const Layout& layout, std::int64_t rank,
                                            const CommOptions& options, const GroupBroadcast& group_broadcast) {
  ModeCommunicators result;
  try {
    if (!world) throw StateError("mode communicators need a world communicator, but the one given is empty");
    if (rank < 0 || rank >= layout.world_size()) {
      throw ConfigError(fmt::format("rank {} is outside the layout's world of {} ranks", rank, layout.world_size()));
    }
    const bool by_split = options.use_split && split_available();
    if (!by_split && !group_broadcast) {
      throw StateError(
          options.use_split
              ? fmt::format("mode communicators must be created per group because pgroups was compiled against NCCL "
                            "{} (ncclCommSplit needs 2.18), and that needs a group broadcast; none was given",
                            nccl_compile_version())
              : std::string("mode communicators are to be created per group (use_split = false), which needs a "
                            "group broadcast; none was given"));
    }
    const std::vector<ModePlan> plan = plan_modes(layout, rank);
    const int world_size = world.size();
    const int world_rank = world.rank();
    if (world_size != layout.world_size() || world_rank != rank) {
      throw ConfigError(fmt::format(
          "the world communicator has {} ranks and this process is its rank {}, but the layout is for {} ranks and "
          "rank {}",
          world_size, world_rank, layout.world_size(), rank));
    }

    result.add(ParallelMode::global, std::move(world));
    for (const ModePlan& step : plan) {
      const auto start = std::chrono::steady_clock::now();
      std::string name(mode_name(step.mode));
      // The parent is looked up each time: add() may move the communicators it holds.
      NcclCommunicator comm =
          by_split ? split_communicator(result.at(ParallelMode::global), std::move(name), step.colour, step.key,
                                        options)
                   : init_communicator(
                         std::move(name), step.size, step.key,
                         [&](std::span<std::byte> bytes) { group_broadcast(step.mode, bytes); }, options);
      const int size = comm.size();
      const int local = comm.rank();
      if (size != step.size || local != step.key) {
        comm.abort();
        throw BackendError(fmt::format(
            "the NCCL communicator of mode {} has {} ranks with this process at rank {}, but the layout puts it at "
            "local rank {} of a group of {}",
            mode_name(step.mode), size, local, step.key, step.size));
      }
      result.add(step.mode, std::move(comm),
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
