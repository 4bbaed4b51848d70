#include "pgroups/parallel_context.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "device_groups.hpp"
#include "fault_injection.hpp"
#include "pgroups/error.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/node.hpp"
#include "pgroups/timeout.hpp"
#include "watchdog.hpp"

namespace pgroups {
namespace {

std::optional<ParallelMode> injected_failure;

// A value that is no enumerator (a cast from a wrong integer) is a ConfigError naming
// it, never an index past the table.
std::size_t index_of(ParallelMode mode) {
  if (static_cast<std::size_t>(mode) >= kParallelModeCount) (void)mode_name(mode);  // throws
  return static_cast<std::size_t>(mode);
}

void announce(const ContextOptions& options, std::string_view step) {
  if (options.before_step) options.before_step(step);
}

bool mpi_running() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized == 0;
}

// MPI_Comm_free is collective in the standard, and an implementation may wait in it for
// the other ranks; so freeing runs under a watchdog, as creation does. The deadline is
// unlimited (no thread at all) when there is nothing to free or MPI is gone.
template <typename Groups>
mpi::Deadline destruction_deadline(const Groups& groups, const ContextOptions& options) {
  const bool any = std::any_of(groups.begin(), groups.end(), [](const auto& group) { return group.has_value(); });
  if (!any || !mpi_running()) return {};
  return mpi::Deadline(options.timeout.value_or(std::chrono::milliseconds::zero()));
}

constexpr mpi::Step kDestroyStep{"destroy", "the destruction of the context"};

}  // namespace

namespace detail {
void fail_creation_before(std::optional<ParallelMode> mode) noexcept { injected_failure = mode; }
}  // namespace detail

std::string agreement_text(const ParallelConfig& config, const ContextOptions& options,
                           std::string_view node_info_source) {
  return fmt::format("world_size={} pipeline={} tensor={} mode={} depth={} legacy_sequence_dp={} seed={} "
                     "node_info={} backend={} strategy={}",
                     config.world_size, config.pipeline, config.tensor_size, tensor_mode_name(config.tensor_mode),
                     config.depth ? std::to_string(*config.depth) : std::string("-"), config.legacy_sequence_dp,
                     config.seed, node_info_source, backend_name(options.backend), mpi::strategy_name(options.strategy));
}

ParallelContext::ParallelContext(const ParallelConfig& config, MPI_Comm world, ContextOptions options)
    : options_(std::move(options)) {
  using Clock = std::chrono::steady_clock;
  // Resolved before any collective, so that a malformed PGROUPS_TIMEOUT never fails
  // half-way; options() then reports the timeout in effect.
  options_.timeout = resolve_timeout(options_.timeout);
  const mpi::Deadline deadline(*options_.timeout);
  const mpi::Communicator borrowed = mpi::Communicator::borrow(world);
  const int size = borrowed.size();
  global_rank_ = borrowed.rank();

  ParallelConfig resolved = config;
  if (resolved.world_size == 0) resolved.world_size = size;
  // Validate before any collective, report after the agreement: a rank must not leave
  // before the others know whether they all hold the same plan, or they would wait for
  // it forever.
  std::exception_ptr invalid;
  try {
    // The same on every rank once they agree on the backend, as the configuration is.
    require_backend_built(options_.backend);
    if (resolved.world_size != size) {
      throw ConfigError(fmt::format("world size {} was given, but the communicator has {} ranks",
                                    resolved.world_size, size));
    }
    layout_.emplace(resolved);
  } catch (...) {
    invalid = std::current_exception();
  }

  // The first two steps wait without blocking (MPI_Comm_idup, MPI_Iallreduce), so a rank
  // that never arrives makes the others throw TimeoutError here.
  announce(options_, "duplicate");
  const auto dup_start = Clock::now();
  mpi::Communicator control =
      mpi::dup_until(borrowed, deadline, {"duplicate", "the duplication of the world communicator"});
  const double dup_seconds = std::chrono::duration<double>(Clock::now() - dup_start).count();
  announce(options_, "agreement");
  // Where the node query's answer comes from is agreed on with the configuration: the
  // query is a collective, and ranks that disagreed on taking it would wait forever.
  const std::optional<mpi::NodeInfo> launcher_node = mpi::node_info_from_launcher(borrowed);
  mpi::require_identical(control,
                         agreement_text(resolved, options_, launcher_node ? "launcher" : "shared_memory_split"),
                         "configuration", deadline);
  if (invalid) std::rethrow_exception(invalid);

  // Every later step blocks inside MPI, which can neither time out nor be cancelled: a
  // watchdog ends the process if one of them is still running at the deadline.
  detail::Watchdog watchdog(deadline, static_cast<int>(global_rank_), size);
  announce(options_, "node");
  mpi::NodeInfo node;
  {
    const auto guard = watchdog.enter({"node", "the node query"});
    node = launcher_node ? *launcher_node : mpi::node_info(control);
  }
  processes_on_node_ = node.processes;
  local_rank_on_node_ = node.local_rank;

  // Built aside and moved in at the end: if anything throws, these locals free every
  // communicator created so far and the context never becomes initialized.
  std::array<std::optional<ModeGroup>, kParallelModeCount> created{};
  // `global` is the world itself: the duplicate made above serves as its communicator
  // and as the parent of every other mode.
  created[index_of(ParallelMode::global)] = ModeGroup{std::move(control), global_rank_, size, dup_seconds};
  const mpi::Communicator& parent = created[index_of(ParallelMode::global)]->comm;
  // The device is bound before any mode is created, so that a rank without a GPU fails
  // the job before it has spent a collective per mode. Declared after `created`, so that
  // on a failure the NCCL communicators go before the MPI ones.
  std::unique_ptr<detail::DeviceGroups> device_groups;
  if (options_.backend == Backend::nccl) {
    announce(options_, "device");
    const auto guard = watchdog.enter({"device", "the binding of a CUDA device"});
    device_groups = detail::DeviceGroups::bind(parent, options_.device, local_rank_on_node_);
  }
  for (ParallelMode mode : layout_->modes()) {
    if (injected_failure == mode) {
      throw BackendError(fmt::format("injected failure before creating mode {}", mode_name(mode)));
    }
    if (mode == ParallelMode::global) continue;
    announce(options_, mode_name(mode));
    const std::string description = fmt::format("the creation of mode {}", mode_name(mode));
    const auto guard = watchdog.enter({mode_name(mode), description});
    const auto start = Clock::now();
    mpi::Communicator comm = mpi::create_mode_communicator(parent, *layout_, mode, options_.strategy);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    created[index_of(mode)] = ModeGroup{std::move(comm), layout_->local_rank(global_rank_, mode),
                                        layout_->group_size(mode), seconds};
  }
  if (device_groups) {
    announce(options_, "nccl");
    const auto guard = watchdog.enter({"nccl", "the creation of the NCCL communicators"});
    // Each NCCL step polls under its own limit; zero means none (a year is none here).
    const std::chrono::milliseconds step_limit =
        *options_.timeout > std::chrono::milliseconds::zero() ? *options_.timeout : std::chrono::hours(24 * 365);
    device_groups->create(
        *layout_, global_rank_, parent, [&created](ParallelMode mode) { return created[index_of(mode)]->comm.get(); },
        step_limit);
  }
  groups_ = std::move(created);
  device_groups_ = std::move(device_groups);
}

ParallelContext::~ParallelContext() { destroy_quietly(); }

ParallelContext::ParallelContext(ParallelContext&& other) noexcept
    : layout_(std::move(other.layout_)),
      options_(other.options_),
      global_rank_(other.global_rank_),
      processes_on_node_(other.processes_on_node_),
      local_rank_on_node_(other.local_rank_on_node_),
      virtual_pipeline_size_(other.virtual_pipeline_size_),
      virtual_pipeline_rank_(other.virtual_pipeline_rank_),
      groups_(std::move(other.groups_)),
      device_groups_(std::move(other.device_groups_)) {
  for (auto& group : other.groups_) group.reset();
}

ParallelContext& ParallelContext::operator=(ParallelContext&& other) noexcept {
  if (this != &other) {
    destroy_quietly();
    layout_ = std::move(other.layout_);
    options_ = other.options_;
    global_rank_ = other.global_rank_;
    processes_on_node_ = other.processes_on_node_;
    local_rank_on_node_ = other.local_rank_on_node_;
    virtual_pipeline_size_ = other.virtual_pipeline_size_;
    virtual_pipeline_rank_ = other.virtual_pipeline_rank_;
    groups_ = std::move(other.groups_);
    for (auto& group : other.groups_) group.reset();
    device_groups_ = std::move(other.device_groups_);
  }
  return *this;
}

bool ParallelContext::is_initialized(ParallelMode mode) const noexcept {
  return static_cast<std::size_t>(mode) < kParallelModeCount && groups_[index_of(mode)].has_value();
}

std::vector<ParallelMode> ParallelContext::modes() const {
  std::vector<ParallelMode> result;
  for (ParallelMode mode : kAllParallelModes) {
    if (is_initialized(mode)) result.push_back(mode);
  }
  return result;
}

const ParallelContext::ModeGroup& ParallelContext::group(ParallelMode mode) const {
  const auto& entry = groups_[index_of(mode)];
  if (entry) return *entry;
  const std::vector<ParallelMode> existing = modes();
  if (existing.empty()) {
    throw StateError(fmt::format("mode {} is not initialized: the context was destroyed (or moved from)",
                                 mode_name(mode)));
  }
  std::string names;
  for (ParallelMode m : existing) names += fmt::format("{}{}", names.empty() ? "" : ", ", mode_name(m));
  throw StateError(fmt::format("mode {} is not initialized for {}; the initialized modes are: {}", mode_name(mode),
                               describe(config()), names));
}

std::int64_t ParallelContext::local_rank(ParallelMode mode) const { return group(mode).local_rank; }

std::int64_t ParallelContext::world_size(ParallelMode mode) const { return group(mode).size; }

GroupHandle ParallelContext::get_group(ParallelMode mode) const {
  const ModeGroup& g = group(mode);  // StateError for a mode that was not created
  if (device_groups_) return {mode, device_groups_->comm(mode)};
  return {mode, g.comm.get()};
}

GroupHandle ParallelContext::get_cpu_group(ParallelMode mode) const { return {mode, group(mode).comm.get()}; }

std::vector<std::int64_t> ParallelContext::ranks_in_group(ParallelMode mode) const {
  require(mode);
  return layout_->group_of(global_rank_, mode);
}

std::int64_t ParallelContext::next_global_rank(ParallelMode mode) const {
  const ModeGroup& g = group(mode);
  return layout_->group_member(global_rank_, mode, (g.local_rank + 1) % g.size);
}

std::int64_t ParallelContext::prev_global_rank(ParallelMode mode) const {
  const ModeGroup& g = group(mode);
  return layout_->group_member(global_rank_, mode, (g.local_rank + g.size - 1) % g.size);
}

bool ParallelContext::is_first_rank(ParallelMode mode) const { return group(mode).local_rank == 0; }

bool ParallelContext::is_last_rank(ParallelMode mode) const {
  const ModeGroup& g = group(mode);
  return g.local_rank == g.size - 1;
}

std::int64_t ParallelContext::seed(ParallelMode mode) const {
  require(mode);
  return layout_->seed(global_rank_, mode);
}

double ParallelContext::creation_seconds(ParallelMode mode) const {
  return group(mode).creation_seconds + device_creation_seconds(mode);
}

double ParallelContext::device_creation_seconds(ParallelMode mode) const {
  require(mode);
  return device_groups_ ? device_groups_->creation_seconds(mode) : 0.0;
}

std::vector<DeviceGroupCheck> ParallelContext::check_device_groups() {
  require(ParallelMode::global);  // i.e. not destroyed
  if (!device_groups_) {
    throw StateError(fmt::format("the context has no device groups to check: its backend is {}, not nccl",
                                 backend_name(options_.backend)));
  }
  return device_groups_->check(*layout_, global_rank_);
}

bool ParallelContext::is_pipeline_first_stage(bool ignore_virtual) const {
  require(ParallelMode::global);  // i.e. not destroyed
  if (!ignore_virtual && virtual_pipeline_size_ && virtual_pipeline_rank_ != 0) return false;
  return !is_initialized(ParallelMode::pipe) || is_first_rank(ParallelMode::pipe);
}

bool ParallelContext::is_pipeline_last_stage(bool ignore_virtual) const {
  require(ParallelMode::global);  // i.e. not destroyed
  if (!ignore_virtual && virtual_pipeline_size_ && virtual_pipeline_rank_ != *virtual_pipeline_size_ - 1) {
    return false;
  }
  return !is_initialized(ParallelMode::pipe) || is_last_rank(ParallelMode::pipe);
}

void ParallelContext::set_virtual_pipeline_parallel_size(std::optional<std::int64_t> size) {
  if (size && *size < 1) {
    throw ConfigError(fmt::format("virtual pipeline size {} is invalid: it must be at least 1", *size));
  }
  virtual_pipeline_size_ = size;
}

void ParallelContext::set_virtual_pipeline_parallel_rank(std::int64_t rank) {
  if (rank < 0) throw ConfigError(fmt::format("virtual pipeline rank {} is invalid: it must be non-negative", rank));
  virtual_pipeline_rank_ = rank;
}

std::int64_t ParallelContext::device() const noexcept {
  if (device_groups_) return device_groups_->device();
  if (options_.device) return *options_.device;
  const std::int64_t per_node = options_.devices_per_node > 0 ? options_.devices_per_node : processes_on_node_;
  return global_rank_ % per_node;
}

void ParallelContext::destroy() {
  detail::Watchdog watchdog(destruction_deadline(groups_, options_), static_cast<int>(global_rank_),
                            layout_ ? static_cast<int>(layout_->world_size()) : 0);
  const auto guard = watchdog.enter_if_possible(kDestroyStep);
  // The NCCL communicators first: they were created after (and from) the MPI ones.
  std::exception_ptr device_failure;
  if (device_groups_) {
    try {
      device_groups_->destroy();
    } catch (...) {
      device_failure = std::current_exception();
    }
  }
  std::optional<BackendError> first_failure;
  for (auto it = kAllParallelModes.rbegin(); it != kAllParallelModes.rend(); ++it) {
    auto& entry = groups_[index_of(*it)];
    if (!entry) continue;
    try {
      entry->comm.free();
    } catch (const BackendError& error) {
      if (!first_failure) first_failure = error;
    }
    entry.reset();
  }
  if (device_failure) std::rethrow_exception(device_failure);
  if (first_failure) throw *first_failure;
}

void ParallelContext::destroy_quietly() noexcept {
  // Best effort: without a watchdog (no thread could be started), the handles are still
  // freed.
  std::optional<detail::Watchdog> watchdog;
  try {
    watchdog.emplace(destruction_deadline(groups_, options_), static_cast<int>(global_rank_),
                     layout_ ? static_cast<int>(layout_->world_size()) : 0);
  } catch (...) {
    watchdog.reset();
  }
  const auto guard = watchdog ? watchdog->enter_if_possible(kDestroyStep) : detail::Watchdog::Guard(nullptr);
  device_groups_.reset();  // NCCL before MPI, as in destroy()
  for (auto it = kAllParallelModes.rbegin(); it != kAllParallelModes.rend(); ++it) groups_[index_of(*it)].reset();
}

}  // namespace pgroups
