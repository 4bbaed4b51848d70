#include "pgroups/parallel_context.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "device_groups.hpp"
#include "pgroups/communicator_sharing.hpp"
#include "pgroups/creation_steps.hpp"
#include "pgroups/error.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/node.hpp"
#include "pgroups/mpi/strategy.hpp"
#include "pgroups/agreement_record.hpp"
#include "pgroups/timeout.hpp"
#include "watchdog.hpp"

namespace pgroups {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void announce(const ContextOptions& options, const CreationStep& step) {
  if (options.before_step) options.before_step(step.name);
}

bool mpi_running() noexcept {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

// Both may be asked before MPI_Init and after MPI_Finalize, unlike every other MPI call.
void require_mpi_running() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    throw StateError("a ParallelContext cannot be built after MPI_Finalize: MPI must be running (build it between "
                     "MPI_Init and MPI_Finalize, e.g. inside a pgroups::mpi::Session)");
  }
  if (initialized == 0) {
    throw StateError("a ParallelContext cannot be built before MPI_Init: MPI must be running (call MPI_Init or "
                     "MPI_Init_thread first, or hold a pgroups::mpi::Session)");
  }
}

// The pipeline's name in a layout: `pipe` for the presets, `pp` for a mesh.
std::string_view pipeline_name(const Layout& layout) noexcept {
  return layout.is_mesh() ? std::string_view("pp") : mode_name(ParallelMode::pipe);
}

constexpr mpi::Step kDestroyStep{"destroy", "the destruction of the context"};

}  // namespace

// "tp=2,dp=4 groups=tp,tp-dp": the order, the sizes and the tokens as given, or "-".
static std::string mesh_text(const std::optional<MeshConfig>& mesh) {
  if (!mesh) return "-";
  std::string dims;
  for (const MeshDim& dim : mesh->dims) dims += fmt::format("{}{}={}", dims.empty() ? "" : ",", dim.name, dim.size);
  return fmt::format("{} groups={}", dims, fmt::join(mesh->groups, ","));
}

std::string agreement_text(const ParallelConfig& config, const ContextOptions& options,
                           std::string_view node_info_source) {
  std::string text = fmt::format("world_size={} pipeline={} tensor={} mode={} depth={} legacy_sequence_dp={} seed={} "
                                 "mesh={} node_info={} backend={} strategy={}",
                                 config.world_size, config.pipeline, config.tensor_size,
                                 tensor_mode_name(config.tensor_mode),
                                 config.depth ? std::to_string(*config.depth) : std::string("-"),
                                 config.legacy_sequence_dp, config.seed, mesh_text(config.mesh), node_info_source,
                                 backend_name(options.backend), mpi::strategy_name(options.strategy));
  // Sharing decides which collectives run; only its non-default value is spelled out,
  // so that the texts of earlier versions stay as they were.
  if (!options.share_communicators) text += " communicators=separate";
  // The program's own settings (ContextOptions::agreed_settings), when it has any.
  if (!options.agreed_settings.empty()) text += fmt::format(" settings={}", options.agreed_settings);
  return text;
}

std::string agreement_record(const ParallelConfig& config, const ContextOptions& options,
                             std::string_view node_info_source) {
  // Every setting as its own length-prefixed field: no two configurations encode the
  // same, whatever their names and values hold. The display text comes last.
  std::vector<SettingField> fields = {
      {"world_size", std::to_string(config.world_size)},
      {"pipeline", std::to_string(config.pipeline)},
      {"tensor", std::to_string(config.tensor_size)},
      {"mode", std::string(tensor_mode_name(config.tensor_mode))},
      {"depth", config.depth ? std::to_string(*config.depth) : std::string("-")},
      {"legacy_sequence_dp", config.legacy_sequence_dp ? "1" : "0"},
      {"seed", std::to_string(config.seed)},
      {"mesh", config.mesh ? std::to_string(config.mesh->dims.size()) : std::string("-")},
  };
  if (config.mesh) {
    for (const MeshDim& dim : config.mesh->dims) {
      fields.emplace_back("mesh.dim", dim.name);
      fields.emplace_back("mesh.size", std::to_string(dim.size));
    }
    fields.emplace_back("mesh.groups", std::to_string(config.mesh->groups.size()));
    for (const std::string& token : config.mesh->groups) fields.emplace_back("mesh.group", token);
  }
  fields.emplace_back("node_info", std::string(node_info_source));
  fields.emplace_back("backend", std::string(backend_name(options.backend)));
  fields.emplace_back("strategy", std::string(mpi::strategy_name(options.strategy)));
  fields.emplace_back("settings", options.agreed_settings);
  fields.emplace_back("text", agreement_text(config, options, node_info_source));
  return encode_settings(fields);
}

ParallelContext::ParallelContext(const ParallelConfig& config, MPI_Comm world, ContextOptions options)
    : options_(std::move(options)) {
  require_mpi_running();
  // Resolved before any collective, so that a malformed PGROUPS_TIMEOUT never fails
  // half-way; options() then reports the timeout in effect.
  options_.timeout = resolve_timeout(options_.timeout);
  const mpi::Deadline deadline(*options_.timeout);
  const mpi::Communicator borrowed = mpi::Communicator::borrow(world);
  const int size = borrowed.size();
  global_rank_ = borrowed.rank();
  const bool with_device = options_.backend == Backend::nccl;

  ParallelConfig resolved = config;
  // A mesh's world size may be left to its sizes; the communicator's must then match.
  if (resolved.world_size == 0) resolved.world_size = size;
  // Validate before any collective, report after the agreement: a rank must not leave
  // before the others know whether they all hold the same plan, or they would wait for
  // it forever.
  std::exception_ptr invalid;
  std::vector<CreationStep> steps;
  try {
    // The same on every rank once they agree on the backend, as the configuration is.
    require_backend_built(options_.backend);
    if (resolved.world_size != size) {
      throw ConfigError(fmt::format("world size {} was given, but the communicator has {} ranks",
                                    resolved.world_size, size));
    }
    layout_.emplace(resolved);
    steps = creation_steps(*layout_, with_device);
  } catch (...) {
    invalid = std::current_exception();
  }
  // Without a valid plan only the first two steps run; they are the same for every plan.
  const CreationStep duplicate_step = creation_step(StepKind::duplicate);
  const CreationStep agreement_step = creation_step(StepKind::agreement);

  // The first two steps wait without blocking (MPI_Comm_idup, MPI_Iallreduce), so a rank
  // that never arrives makes the others throw TimeoutError here.
  announce(options_, duplicate_step);
  const auto dup_start = Clock::now();
  mpi::Communicator control =
      mpi::dup_until(borrowed, deadline, {duplicate_step.name, duplicate_step.description});
  const double dup_seconds = seconds_since(dup_start);
  announce(options_, agreement_step);
  // Where the node query's answer comes from is agreed on with the configuration: the
  // query is a collective, and ranks that disagreed on taking it would wait forever.
  const std::optional<mpi::NodeInfo> launcher_node = mpi::node_info_from_launcher(borrowed);
  mpi::require_identical(control,
                         agreement_record(resolved, options_, launcher_node ? "launcher" : "shared_memory_split"),
                         "configuration", deadline);
  if (invalid) std::rethrow_exception(invalid);

  // Built aside and moved in at the end: if anything throws, these locals free every
  // communicator created so far and the context never becomes initialized.
  const auto kinds = layout_->group_kinds();
  const std::vector<KindSharing> sharing = communicator_sharing(*layout_, options_.share_communicators);
  std::vector<KindGroup> created(kinds.size());
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    KindGroup& entry = created[kind];
    entry.member = layout_->is_member(global_rank_, kind);
    entry.size = layout_->group_size(kind);
    entry.sharing = sharing[kind];
    if (entry.member) entry.local_rank = layout_->local_rank(global_rank_, kind);
    // A kind that is the whole world (`global` among them): the duplicate serves as its
    // communicator.
    if (sharing[kind].source == CommSource::world) {
      entry.comm = mpi::Communicator::borrow(control.get());
      if (kinds[kind].mode == ParallelMode::global) entry.creation_seconds = dup_seconds;
    }
  }
  // Declared after `created`, so that on a failure the NCCL communicators go first.
  std::unique_ptr<detail::DeviceGroups> device_groups;

  // Every later step blocks inside MPI, which can neither time out nor be cancelled: a
  // watchdog ends the process if one of them is still running at the deadline.
  detail::Watchdog watchdog(deadline, static_cast<int>(global_rank_), size);
  for (const CreationStep& step : steps) {
    if (step.waits_without_blocking()) continue;  // done above
    announce(options_, step);
    const auto guard = watchdog.enter({step.name, step.description});
    switch (step.kind) {
      case StepKind::node: {
        const mpi::NodeInfo node = launcher_node ? *launcher_node : mpi::node_info(control);
        processes_on_node_ = node.processes;
        local_rank_on_node_ = node.local_rank;
        break;
      }
      case StepKind::device:
        // Before any group kind, so that a rank without a GPU fails the job before it
        // has spent a collective per kind.
        device_groups = detail::DeviceGroups::bind(control, options_.device, local_rank_on_node_);
        break;
      case StepKind::group: {
        const std::size_t kind = *step.group_kind;
        const auto start = Clock::now();
        KindGroup& entry = created[kind];
        switch (entry.sharing.source) {
          case CommSource::own:
            entry.comm = mpi::create_group_communicator(control, *layout_, kind, options_.strategy);
            break;
          case CommSource::shared:  // the owner comes first in creation order
            entry.comm = mpi::Communicator::borrow(created[entry.sharing.owner].comm.get());
            break;
          case CommSource::singleton:  // local: a collective over this rank alone
            if (entry.member) entry.comm = mpi::Communicator::borrow(MPI_COMM_SELF).dup();
            break;
          case CommSource::world: break;  // the duplicate, above
        }
        entry.creation_seconds = seconds_since(start);
        break;
      }
      case StepKind::nccl: {
        // Each NCCL step polls under its own limit; zero means none (wait_limit).
        const std::chrono::milliseconds step_limit = wait_limit(*options_.timeout);
        const Layout& layout = *layout_;
        device_groups->create(
            layout, global_rank_, control,
            [&created, &layout](std::string_view group) {
              return created[layout.group_kind_index(group)].comm.get();
            },
            step_limit, sharing);
        break;
      }
      case StepKind::duplicate:
      case StepKind::agreement: break;
    }
  }
  name_communicators(control, created);
  world_ = std::move(control);
  world_seconds_ = dup_seconds;
  groups_ = std::move(created);
  device_groups_ = std::move(device_groups);
}

// MPI_Comm_set_name is local: each communicator carries the names of the kinds it serves,
// so that MPI's diagnostics (and tools reading the names) say which kinds they are.
void ParallelContext::name_communicators(const mpi::Communicator& world, const std::vector<KindGroup>& created) const {
  const auto kinds = layout_->group_kinds();
  std::vector<std::string> names(kinds.size());
  std::string world_name;
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    const KindGroup& entry = created[kind];
    std::string& target = entry.sharing.source == CommSource::world ? world_name
                          : entry.sharing.source == CommSource::shared ? names[entry.sharing.owner]
                                                                       : names[kind];
    target += (target.empty() ? "" : ",") + kinds[kind].name;
  }
  auto set_name = [](MPI_Comm comm, const std::string& kinds_served) {
    if (comm == MPI_COMM_NULL) return;
    std::string name = "pgroups " + kinds_served;
    if (name.size() >= MPI_MAX_OBJECT_NAME) name.resize(MPI_MAX_OBJECT_NAME - 1);
    MPI_Comm_set_name(comm, name.c_str());  // a name is a convenience: a failure is ignored
  };
  set_name(world.get(), world_name.empty() ? std::string("world") : world_name);
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    const KindSharing& sharing = created[kind].sharing;
    if (sharing.source == CommSource::own || sharing.source == CommSource::singleton) {
      set_name(created[kind].comm.get(), names[kind]);
    }
  }
}

CommunicatorBill ParallelContext::communicator_bill() const {
  if (!layout_) throw StateError("the context was moved from; it has no layout");
  return pgroups::communicator_bill(*layout_, global_rank_, options_.share_communicators);
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
      world_(std::move(other.world_)),
      world_seconds_(other.world_seconds_),
      groups_(std::move(other.groups_)),
      device_groups_(std::move(other.device_groups_)) {
  other.groups_.clear();
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
    world_ = std::move(other.world_);
    world_seconds_ = other.world_seconds_;
    groups_ = std::move(other.groups_);
    other.groups_.clear();
    device_groups_ = std::move(other.device_groups_);
  }
  return *this;
}

std::vector<std::string> ParallelContext::groups() const {
  std::vector<std::string> names;
  if (destroyed()) return names;
  for (const GroupKind& kind : layout_->group_kinds()) names.push_back(kind.name);
  return names;
}

std::vector<ParallelMode> ParallelContext::modes() const {
  std::vector<ParallelMode> result;
  if (destroyed()) return result;
  for (const GroupKind& kind : layout_->group_kinds()) {
    if (kind.mode) result.push_back(*kind.mode);
  }
  return result;
}

bool ParallelContext::is_initialized(std::string_view group) const noexcept {
  if (destroyed()) return false;
  try {
    return layout_->find_group_kind(group).has_value();
  } catch (...) {
    return false;
  }
}

std::size_t ParallelContext::kind_index(std::string_view group) const {
  if (destroyed()) {
    throw StateError(
        fmt::format("group {} is not initialized: the context was destroyed (or moved from)", group));
  }
  // StateError naming the kinds there are and the closest one.
  return layout_->group_kind_index(group);
}

bool ParallelContext::is_member(std::string_view group) const {
  if (!destroyed() && !layout_->find_group_kind(group) && group == pipeline_name(*layout_) &&
      layout_->pipeline_size() == 1) {
    return true;
  }
  return groups_[kind_index(group)].member;
}

ParallelContext::Resolved ParallelContext::resolve(std::string_view group) const {
  // No pipeline: answered as Megatron-LM does, as a group of this rank alone.
  if (!destroyed() && group == pipeline_name(*layout_) && layout_->pipeline_size() == 1 &&
      !layout_->find_group_kind(group)) {
    return {group, nullptr, 0};
  }
  const std::size_t kind = kind_index(group);
  const KindGroup& entry = groups_[kind];
  if (!entry.member) {
    throw StateError(fmt::format("rank {} is in no group of kind {}: it is a partial kind, and this rank has no "
                                 "communicator of it (ask is_member first)",
                                 global_rank_, layout_->group_kinds()[kind].name));
  }
  return {layout_->group_kinds()[kind].name, &entry, kind};
}

std::int64_t ParallelContext::local_rank(std::string_view group) const {
  const Resolved found = resolve(group);
  return found.group ? found.group->local_rank : 0;
}

std::int64_t ParallelContext::world_size(std::string_view group) const {
  const Resolved found = resolve(group);
  return found.group ? found.group->size : 1;
}

GroupHandle ParallelContext::get_group(std::string_view group) const {
  const Resolved found = resolve(group);
  if (!found.group) {
    throw StateError(fmt::format("there is no communicator of group {}: the pipeline size is 1, so none was created "
                                 "(its queries answer for this rank alone)",
                                 group));
  }
  if (device_groups_) {
    const bool is_global = layout_->group_kinds()[found.kind].mode == ParallelMode::global;
    return {found.name, device_groups_->comm(is_global ? std::string_view("global") : found.name)};
  }
  return {found.name, found.group->comm.get()};
}

GroupHandle ParallelContext::get_cpu_group(std::string_view group) const {
  const Resolved found = resolve(group);
  if (!found.group) {
    throw StateError(fmt::format("there is no communicator of group {}: the pipeline size is 1, so none was created "
                                 "(its queries answer for this rank alone)",
                                 group));
  }
  return {found.name, found.group->comm.get()};
}

std::vector<std::int64_t> ParallelContext::ranks_in_group(std::string_view group) const {
  const Resolved found = resolve(group);
  if (!found.group) return {global_rank_};
  return layout_->group_of(global_rank_, found.kind);
}

Neighbour ParallelContext::next_rank(std::string_view group) const {
  const Resolved found = resolve(group);
  if (!found.group) return {global_rank_, 0};
  const std::int64_t local = (found.group->local_rank + 1) % found.group->size;
  return {layout_->group_member(global_rank_, found.kind, local), local};
}

Neighbour ParallelContext::prev_rank(std::string_view group) const {
  const Resolved found = resolve(group);
  if (!found.group) return {global_rank_, 0};
  const std::int64_t local = (found.group->local_rank + found.group->size - 1) % found.group->size;
  return {layout_->group_member(global_rank_, found.kind, local), local};
}

bool ParallelContext::is_first_rank(std::string_view group) const { return local_rank(group) == 0; }

bool ParallelContext::is_last_rank(std::string_view group) const {
  return local_rank(group) == world_size(group) - 1;
}

std::int64_t ParallelContext::seed(std::string_view group) const {
  const Resolved found = resolve(group);
  if (!found.group) return config().seed;
  return layout_->seed(global_rank_, found.kind);
}

double ParallelContext::creation_seconds(std::string_view group) const {
  const std::size_t kind = kind_index(group);
  return groups_[kind].creation_seconds + device_creation_seconds(group);
}

double ParallelContext::device_creation_seconds(std::string_view group) const {
  const std::size_t kind = kind_index(group);
  if (!device_groups_) return 0.0;
  const GroupKind& found = layout_->group_kinds()[kind];
  return device_groups_->creation_seconds(found.mode == ParallelMode::global ? std::string_view("global")
                                                                             : std::string_view(found.name));
}

std::vector<GroupCheck> ParallelContext::check_device_groups() {
  if (destroyed()) throw StateError("the context was destroyed (or moved from); there are no device groups to check");
  if (!device_groups_) {
    throw StateError(fmt::format("the context has no device groups to check: its backend is {}, not nccl",
                                 backend_name(options_.backend)));
  }
  return device_groups_->check(*layout_, global_rank_);
}

std::int64_t ParallelContext::pipeline_stage() const {
  if (destroyed()) throw StateError("the context was destroyed (or moved from); it has no pipeline stage");
  // The pipeline coordinate, whether or not a pipeline group kind was created.
  const std::string_view name = layout_->is_mesh() ? std::string_view("pp") : std::string_view("pipe");
  for (const Coordinate& coordinate : layout_->coordinates(global_rank_)) {
    if (coordinate.name == name) return coordinate.value;
  }
  return 0;
}

bool ParallelContext::is_pipeline_first_stage(bool ignore_virtual) const {
  const std::int64_t stage = pipeline_stage();
  if (!ignore_virtual && virtual_pipeline_size_ && virtual_pipeline_rank_ != 0) return false;
  return stage == 0;
}

bool ParallelContext::is_pipeline_last_stage(bool ignore_virtual) const {
  const std::int64_t stage = pipeline_stage();
  if (!ignore_virtual && virtual_pipeline_size_ && virtual_pipeline_rank_ != *virtual_pipeline_size_ - 1) {
    return false;
  }
  return stage == layout_->pipeline_size() - 1;
}

void ParallelContext::set_virtual_pipeline_parallel_size(std::optional<std::int64_t> size) {
  if (size && *size < 1) {
    throw ConfigError(fmt::format("virtual pipeline size {} is invalid: it must be at least 1", *size));
  }
  virtual_pipeline_size_ = size;
  if (size && virtual_pipeline_rank_ >= *size) virtual_pipeline_rank_ = 0;
}

void ParallelContext::set_virtual_pipeline_parallel_rank(std::int64_t rank) {
  if (rank < 0) throw ConfigError(fmt::format("virtual pipeline rank {} is invalid: it must be non-negative", rank));
  if (virtual_pipeline_size_ && rank >= *virtual_pipeline_size_) {
    throw ConfigError(fmt::format("virtual pipeline rank {} is invalid: the virtual pipeline size is {}, so the rank "
                                  "must be below it",
                                  rank, *virtual_pipeline_size_));
  }
  virtual_pipeline_rank_ = rank;
}

std::int64_t ParallelContext::device() const noexcept {
  if (device_groups_) return device_groups_->device();
  if (options_.device) return *options_.device;
  const std::int64_t per_node = options_.devices_per_node > 0 ? options_.devices_per_node : processes_on_node_;
  return global_rank_ % per_node;
}

// MPI_Comm_free is collective in the standard, and an implementation may wait in it for
// the other ranks; so freeing runs under a watchdog, as creation does. The deadline is
// unlimited (no thread at all) when there is nothing to free or MPI is gone.
void ParallelContext::destroy() {
  const mpi::Deadline deadline = destroyed() || !mpi_running()
                                     ? mpi::Deadline()
                                     : mpi::Deadline(options_.timeout.value_or(std::chrono::milliseconds::zero()));
  detail::Watchdog watchdog(deadline, static_cast<int>(global_rank_),
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
  for (auto it = groups_.rbegin(); it != groups_.rend(); ++it) {
    try {
      it->comm.free();
    } catch (const BackendError& error) {
      if (!first_failure) first_failure = error;
    }
  }
  groups_.clear();
  try {
    world_.free();
  } catch (const BackendError& error) {
    if (!first_failure) first_failure = error;
  }
  if (device_failure) std::rethrow_exception(device_failure);
  if (first_failure) throw *first_failure;
}

void ParallelContext::destroy_quietly() noexcept {
  // Best effort: without a watchdog (no thread could be started), the handles are still
  // freed.
  std::optional<detail::Watchdog> watchdog;
  try {
    watchdog.emplace(destroyed() || !mpi_running()
                         ? mpi::Deadline()
                         : mpi::Deadline(options_.timeout.value_or(std::chrono::milliseconds::zero())),
                     static_cast<int>(global_rank_), layout_ ? static_cast<int>(layout_->world_size()) : 0);
  } catch (...) {
    watchdog.reset();
  }
  const auto guard = watchdog ? watchdog->enter_if_possible(kDestroyStep) : detail::Watchdog::Guard(nullptr);
  device_groups_.reset();  // NCCL before MPI, as in destroy()
  while (!groups_.empty()) groups_.pop_back();
  world_ = mpi::Communicator();
}

}  // namespace pgroups
