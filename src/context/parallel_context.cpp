#include "pgroups/parallel_context.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <string>
#include <utility>

#include "fault_injection.hpp"
#include "pgroups/error.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/node.hpp"

namespace pgroups {
namespace {

std::optional<ParallelMode> injected_failure;

std::size_t index_of(ParallelMode mode) noexcept { return static_cast<std::size_t>(mode); }

}  // namespace

namespace detail {
void fail_creation_before(std::optional<ParallelMode> mode) noexcept { injected_failure = mode; }
}  // namespace detail

std::string agreement_text(const ParallelConfig& config, const ContextOptions& options) {
  return fmt::format("world_size={} pipeline={} tensor={} mode={} depth={} legacy_sequence_dp={} seed={} strategy={}",
                     config.world_size, config.pipeline, config.tensor_size, tensor_mode_name(config.tensor_mode),
                     config.depth ? std::to_string(*config.depth) : std::string("-"), config.legacy_sequence_dp,
                     config.seed, mpi::strategy_name(options.strategy));
}

ParallelContext::ParallelContext(const ParallelConfig& config, MPI_Comm world, ContextOptions options)
    : options_(options) {
  using Clock = std::chrono::steady_clock;
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
    if (resolved.world_size != size) {
      throw ConfigError(fmt::format("world size {} was given, but the communicator has {} ranks",
                                    resolved.world_size, size));
    }
    layout_.emplace(resolved);
  } catch (...) {
    invalid = std::current_exception();
  }

  const auto dup_start = Clock::now();
  mpi::Communicator control = borrowed.dup();
  const double dup_seconds = std::chrono::duration<double>(Clock::now() - dup_start).count();
  mpi::require_identical(control, agreement_text(resolved, options_), "configuration");
  if (invalid) std::rethrow_exception(invalid);

  const mpi::NodeInfo node = mpi::node_info(control);
  processes_on_node_ = node.processes;
  local_rank_on_node_ = node.local_rank;

  // Built aside and moved in at the end: if anything throws, these locals free every
  // communicator created so far and the context never becomes initialized.
  std::array<std::optional<ModeGroup>, kParallelModeCount> created{};
  // `global` is the world itself: the duplicate made above serves as its communicator
  // and as the parent of every other mode.
  created[index_of(ParallelMode::global)] = ModeGroup{std::move(control), global_rank_, size, dup_seconds};
  const mpi::Communicator& parent = created[index_of(ParallelMode::global)]->comm;
  for (ParallelMode mode : layout_->modes()) {
    if (injected_failure == mode) {
      throw BackendError(fmt::format("injected failure before creating mode {}", mode_name(mode)));
    }
    if (mode == ParallelMode::global) continue;
    const auto start = Clock::now();
    mpi::Communicator comm = mpi::create_mode_communicator(parent, *layout_, mode, options_.strategy);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    created[index_of(mode)] = ModeGroup{std::move(comm), layout_->local_rank(global_rank_, mode),
                                        layout_->group_size(mode), seconds};
  }
  groups_ = std::move(created);
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
      groups_(std::move(other.groups_)) {
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
  }
  return *this;
}

bool ParallelContext::is_initialized(ParallelMode mode) const noexcept { return groups_[index_of(mode)].has_value(); }

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

GroupHandle ParallelContext::get_group(ParallelMode mode) const { return {mode, group(mode).comm.get()}; }

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

double ParallelContext::creation_seconds(ParallelMode mode) const { return group(mode).creation_seconds; }

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
  if (options_.device) return *options_.device;
  const std::int64_t per_node = options_.devices_per_node > 0 ? options_.devices_per_node : processes_on_node_;
  return global_rank_ % per_node;
}

void ParallelContext::destroy() {
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
  if (first_failure) throw *first_failure;
}

void ParallelContext::destroy_quietly() noexcept {
  for (auto it = kAllParallelModes.rbegin(); it != kAllParallelModes.rend(); ++it) groups_[index_of(*it)].reset();
}

}  // namespace pgroups
