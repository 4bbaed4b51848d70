#include "pgroups/context/parallel_context.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "creation_request.hpp"
#include "device_groups.hpp"
#include "gloo_kinds.hpp"
#include "live_groups.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/creation_steps.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/launch/outcome.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/layout/agreement_record.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/node.hpp"
#include "pgroups/mpi/outcome.hpp"
#include "pgroups/mpi/session.hpp"
#include "pgroups/mpi/strategy.hpp"
#include "watchdog.hpp"

namespace pgroups {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void announce(const ContextOptions& options, const CreationStep& step) {
  if (options.before_step) options.before_step(step.name);
}

constexpr mpi::Step kDestroyStep{"destroy", "the destruction of the context"};

// MPI_Comm_set_name is local: each communicator carries the names of the kinds it serves,
// so that MPI's diagnostics (and tools reading the names) say which kinds they are.
void name_communicators(const Layout& layout, const mpi::Communicator& world,
                        const std::vector<detail::KindGroup>& created) {
  const auto kinds = layout.group_kinds();
  std::vector<std::string> names(kinds.size());
  std::string world_name;
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    const detail::KindGroup& entry = created[kind];
    const bool borrowed = entry.sharing.source == CommSource::shared || entry.sharing.source == CommSource::singleton;
    std::string& target = entry.sharing.source == CommSource::world ? world_name
                          : borrowed                                ? names[entry.sharing.owner]
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
    if (sharing.source == CommSource::own || (sharing.source == CommSource::singleton && sharing.owner == kind)) {
      set_name(created[kind].comm.get(), names[kind]);
    }
  }
}

// Which backends each constructor builds: MPI and NCCL communicators over an MPI
// communicator, gloo contexts and NCCL communicators over a bootstrap (`bootstrap`, empty
// for the MPI constructor). The same on every rank, which agree on the backend first.
void require_valid_pair(Backend backend, std::optional<BootstrapKind> bootstrap) {
  if (bootstrap && backend == Backend::mpi) {
    throw ConfigError(fmt::format(
        "backend {} is built over an MPI communicator, not a bootstrap: use ParallelContext(config, MPI_Comm) "
        "(`pgroups verify --bootstrap mpi`), or backend gloo or nccl on the {} bootstrap",
        backend_name(backend), bootstrap_name(*bootstrap)));
  }
  if (!bootstrap && backend == Backend::gloo) {
    throw ConfigError(
        "backend gloo is built over a bootstrap: use ParallelContext(config, bootstrap, options), with an "
        "mpi::MpiBootstrap of the communicator to run it under MPI");
  }
}

// The NCCL step of the MPI constructor: the unique ids over MPI, the world's over the
// duplicate, a group's (the per-group fallback) over the kind's communicator, whose rank
// 0 is the group's local rank 0.
void create_nccl_over_mpi(detail::DeviceGroups& device_groups, const Layout& layout, std::int64_t global_rank,
                          const mpi::Communicator& control, const std::vector<detail::KindGroup>& created,
                          std::chrono::milliseconds step_limit, const std::vector<KindSharing>& sharing) {
  device_groups.create(
      layout, global_rank,
      [&control](std::span<std::byte> bytes) { mpi::broadcast_from_rank0(control.get(), bytes, "the NCCL unique id"); },
      [&created](std::size_t kind, std::span<std::byte> bytes) {
        mpi::broadcast_from_rank0(created[kind].comm.get(), bytes, "a group's NCCL unique id");
      },
      step_limit, sharing);
}

// Rank 0's bytes (an NCCL unique id, 128 bytes) to every rank, through the bootstrap's
// all-gather.
detail::WorldBroadcast bootstrap_broadcast(Bootstrap& bootstrap, std::chrono::milliseconds timeout) {
  return [&bootstrap, timeout](std::span<std::byte> bytes) {
    std::string mine;
    if (bootstrap.rank() == 0) mine.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    const std::vector<std::string> all = bootstrap.all_gather(mine, timeout, "the NCCL unique id");
    if (all.at(0).size() != bytes.size()) {
      throw BackendError(fmt::format("rank 0 sent an NCCL unique id of {} bytes, not {}", all[0].size(), bytes.size()));
    }
    std::memcpy(bytes.data(), all[0].data(), bytes.size());
  };
}

// The per-group fallback of an NCCL without ncclCommSplit sends each group's unique id
// over the group's MPI communicator, which a context on a bootstrap does not have. Every
// rank of one build reaches it at the first kind alike.
detail::KindBroadcast no_group_broadcast() {
  return [](std::size_t, std::span<std::byte>) {
    throw ConfigError(
        "this NCCL has no ncclCommSplit (NCCL 2.18 or later has it), and its per-group creation needs the MPI "
        "bootstrap: build the context over an MPI communicator, or use NCCL 2.18 or later");
  };
}

// Whether a context on a bootstrap connects gloo groups: the gloo backend's own, and the
// CPU groups beside NCCL's where gloo is built.
bool with_gloo(Backend backend) { return backend == Backend::gloo || backend_built(Backend::gloo); }

// The steps a context runs, and the kinds it creates, from a configuration checked
// against the communicator; the layout is made into `layout`. What an invalid
// configuration or an unbuilt backend throws is kept in `invalid` (before any collective).
struct PlannedSteps {
  std::vector<CreationStep> steps;
  std::vector<bool> selected;
};

PlannedSteps planned_steps(const ParallelConfig& resolved, int size, Backend backend,
                           const detail::CreationRequest& request, std::optional<Layout>& layout,
                           std::exception_ptr& invalid, std::optional<BootstrapKind> bootstrap = std::nullopt) {
  PlannedSteps planned;
  try {
    // The same on every rank once they agree on the backend, as the configuration is.
    require_backend_built(backend);
    require_valid_pair(backend, bootstrap);
    if (resolved.world_size != size) {
      throw ConfigError(fmt::format("world size {} was given, but the {} has {} ranks", resolved.world_size,
                                    bootstrap ? "bootstrap" : "communicator", size));
    }
    layout.emplace(resolved);
    planned.steps = bootstrap ? bootstrap_creation_steps(backend == Backend::nccl, with_gloo(backend))
                              : creation_steps(*layout, backend == Backend::nccl);
    planned.selected =
        request.select_kinds ? request.select_kinds(*layout) : std::vector<bool>(layout->group_kinds().size(), true);
  } catch (...) {
    invalid = std::current_exception();
  }
  return planned;
}

// The agreement step: every rank's `settings` (or, where the request carries one, its own
// error in their place, so that every rank throws it) must be the same everywhere.
void agree_on_configuration(const mpi::Communicator& control, const detail::CreationRequest& request,
                            const std::string& settings, const mpi::Deadline& deadline) {
  const std::string record =
      request.own_error ? encode_error(request.own_error->kind, request.own_error->message) : settings;
  mpi::require_identical(control, record, "configuration", deadline);
  // Every rank carried the same error, so the records agreed: each throws it.
  if (request.own_error) {
    judge_records(std::vector<std::string>(static_cast<std::size_t>(control.size()), record), "configuration");
  }
}

// One entry per kind, before any is created: membership, sizes, sharing; a kind that is
// the whole world (`global` among them) has the duplicate as its communicator already.
std::vector<detail::KindGroup> planned_groups(const Layout& layout, std::int64_t global_rank,
                                              const std::vector<KindSharing>& sharing, const mpi::Communicator& control,
                                              double dup_seconds) {
  std::vector<detail::KindGroup> created(layout.group_kinds().size());
  for (std::size_t kind = 0; kind < created.size(); ++kind) {
    detail::KindGroup& entry = created[kind];
    entry.member = layout.is_member(global_rank, kind);
    entry.size = layout.group_size(kind);
    entry.sharing = sharing[kind];
    if (entry.member) entry.local_rank = layout.local_rank(global_rank, kind);
    if (sharing[kind].source == CommSource::world) {
      entry.comm = mpi::Communicator::borrow(control.get());
      if (kind == layout.world_kind()) entry.creation_seconds = dup_seconds;
    }
  }
  return created;
}

// The group step of kind `kind`: its own communicator (a collective), its owner's, or the
// one communicator of this rank alone that every one-rank kind uses (`self_holder`: the
// kind that made it, for the first such kind created).
void create_kind_group(std::vector<detail::KindGroup>& created, std::size_t kind, const mpi::Communicator& control,
                       const Layout& layout, CreationStrategy strategy, std::optional<std::size_t>& self_holder) {
  const auto start = Clock::now();
  detail::KindGroup& entry = created[kind];
  switch (entry.sharing.source) {
    case CommSource::own: entry.comm = mpi::create_group_communicator(control, layout, kind, strategy); break;
    case CommSource::shared:  // the owner comes first in creation order
      entry.comm = mpi::Communicator::borrow(created[entry.sharing.owner].comm.get());
      break;
    case CommSource::singleton:  // local: a collective over this rank alone
      if (!entry.member) break;
      if (self_holder) {
        entry.comm = mpi::Communicator::borrow(created[*self_holder].comm.get());
        entry.sharing.owner = *self_holder;
      } else {
        entry.comm = mpi::Communicator::borrow(MPI_COMM_SELF).dup();
        self_holder = kind;
      }
      break;
    case CommSource::world: break;  // the duplicate, made before
  }
  entry.creation_seconds = seconds_since(start);
}

}  // namespace

std::string agreement_text(const ParallelConfig& config, const ContextOptions& options,
                           std::string_view node_info_source) {
  std::string text = fmt::format("{} node_info={} backend={} strategy={}", config_setting_text(config),
                                 node_info_source, backend_name(options.backend), mpi::strategy_name(options.strategy));
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
  std::vector<SettingField> fields = config_setting_fields(config);
  fields.emplace_back("node_info", std::string(node_info_source));
  fields.emplace_back("backend", std::string(backend_name(options.backend)));
  fields.emplace_back("strategy", std::string(mpi::strategy_name(options.strategy)));
  fields.emplace_back("settings", options.agreed_settings);
  fields.emplace_back("text", agreement_text(config, options, node_info_source));
  return encode_settings(fields);
}

ParallelContext::ParallelContext(const ParallelConfig& config, MPI_Comm world, ContextOptions options)
    : ParallelContext(config, world, std::move(options), detail::CreationRequest{}) {}

ParallelContext::ParallelContext(const ParallelConfig& config, MPI_Comm world, ContextOptions options,
                                 const detail::CreationRequest& request) {
  state_.options = std::move(options);
  ContextOptions& opts = state_.options;
  mpi::require_running("a ParallelContext cannot be built");
  // Resolved before any collective, so that a malformed PGROUPS_TIMEOUT never fails
  // half-way; options() then reports the timeout in effect.
  opts.timeout = resolve_timeout(opts.timeout);
  const mpi::Deadline deadline(*opts.timeout);
  const mpi::Communicator borrowed = mpi::Communicator::borrow(world);
  const int size = borrowed.size();
  state_.global_rank = borrowed.rank();
  const std::int64_t global_rank = state_.global_rank;

  ParallelConfig resolved = config;
  // A mesh's world size may be left to its sizes; the communicator's must then match.
  if (resolved.world_size == 0) resolved.world_size = size;
  // Validate before any collective, report after the agreement: a rank must not leave
  // before the others know whether they all hold the same plan, or they would wait for
  // it forever.
  std::exception_ptr invalid;
  const PlannedSteps planned = planned_steps(resolved, size, opts.backend, request, state_.layout, invalid);
  // Without a valid plan only the first two steps run; they are the same for every plan.
  const CreationStep duplicate_step = creation_step(StepKind::duplicate);
  const CreationStep agreement_step = creation_step(StepKind::agreement);

  // The first two steps wait without blocking (MPI_Comm_idup, MPI_Iallreduce), so a rank
  // that never arrives makes the others throw TimeoutError here.
  announce(opts, duplicate_step);
  const auto dup_start = Clock::now();
  mpi::Communicator control = mpi::dup_until(borrowed, deadline, {duplicate_step.name, duplicate_step.description});
  const double dup_seconds = seconds_since(dup_start);
  announce(opts, agreement_step);
  // Where the node query's answer comes from is agreed on with the configuration: the
  // query is a collective, and ranks that disagreed on taking it would wait forever.
  const std::optional<mpi::NodeInfo> launcher_node = mpi::node_info_from_launcher(borrowed);
  agree_on_configuration(
      control, request, agreement_record(resolved, opts, launcher_node ? "launcher" : "shared_memory_split"), deadline);
  if (invalid) std::rethrow_exception(invalid);

  // Built aside and moved in at the end: if anything throws, these locals free every
  // communicator created so far and the context never becomes initialized.
  const Layout& layout = *state_.layout;
  const std::vector<KindSharing> sharing = communicator_sharing(layout, opts.share_communicators, planned.selected);
  // Allocated before any communicator, so that nothing can fail between the last
  // creation and the hand-over.
  auto live = std::make_unique<detail::LiveGroups>(*opts.timeout, global_rank, size);
  std::vector<detail::KindGroup> created = planned_groups(layout, global_rank, sharing, control, dup_seconds);
  // Declared after `created`, so that on a failure the NCCL communicators go first.
  std::unique_ptr<detail::DeviceGroups> device_groups;

  // The one communicator of this rank alone that every one-rank kind it is a member of
  // uses: made for the first such kind created, borrowed by the others.
  std::optional<std::size_t> self_holder;

  // Every later step blocks inside MPI, which can neither time out nor be cancelled: a
  // watchdog ends the process if one of them is still running at the deadline.
  detail::Watchdog watchdog(deadline, static_cast<int>(global_rank), size);
  for (const CreationStep& step : planned.steps) {
    if (step.waits_without_blocking()) continue;  // done above
    if (step.kind == StepKind::group && !planned.selected[*step.group_kind]) continue;
    announce(opts, step);
    const auto guard = watchdog.enter({step.name, step.description});
    switch (step.kind) {
      case StepKind::node: {
        const mpi::NodeInfo node = launcher_node ? *launcher_node : mpi::node_info(control);
        state_.processes_on_node = node.processes;
        state_.local_rank_on_node = node.local_rank;
        break;
      }
      case StepKind::device:
        // Before any group kind, so that a rank without a GPU fails the job before it
        // has spent a collective per kind.
        device_groups = detail::DeviceGroups::bind(
            [&control](const std::exception_ptr& local, std::string_view what) {
              mpi::require_success_everywhere(control, local, what);
            },
            opts.device, state_.local_rank_on_node);
        state_.bound_device = device_groups->device();
        break;
      case StepKind::group:
        create_kind_group(created, *step.group_kind, control, layout, opts.strategy, self_holder);
        break;
      case StepKind::nccl: {
        // Each NCCL step polls under its own limit; zero means none (wait_limit).
        const std::chrono::milliseconds step_limit = wait_limit(*opts.timeout);
        create_nccl_over_mpi(*device_groups, layout, global_rank, control, created, step_limit, sharing);
        break;
      }
      case StepKind::duplicate:
      case StepKind::agreement:
      case StepKind::gloo: break;
    }
  }
  name_communicators(layout, control, created);
  live->world = std::move(control);
  live->groups = std::move(created);
  live->device_groups = std::move(device_groups);
  state_.live = std::move(live);
}

ParallelContext::ParallelContext(const ParallelConfig& config, Bootstrap& bootstrap, ContextOptions options) {
  state_.options = std::move(options);
  ContextOptions& opts = state_.options;
  opts.timeout = resolve_timeout(opts.timeout);
  const int size = bootstrap.size();
  state_.global_rank = bootstrap.rank();
  const std::int64_t global_rank = state_.global_rank;

  ParallelConfig resolved = config;
  if (resolved.world_size == 0) resolved.world_size = size;
  // As over MPI: validated before the agreement, reported after it.
  std::exception_ptr invalid;
  const PlannedSteps planned =
      planned_steps(resolved, size, opts.backend, {}, state_.layout, invalid, bootstrap.kind());
  announce(opts, creation_step(StepKind::agreement));
  // The bootstrap's all-gather is bounded, so a rank that never arrives makes the others
  // throw TimeoutError here; every rank judges the same records, so all throw alike.
  judge_records(
      bootstrap.all_gather(agreement_record(resolved, opts, "bootstrap"), *opts.timeout, "the configuration agreement"),
      "configuration");
  if (invalid) std::rethrow_exception(invalid);
  const Layout& layout = *state_.layout;
  const std::vector<KindSharing> sharing = communicator_sharing(layout, opts.share_communicators, planned.selected);
  auto live = std::make_unique<detail::LiveGroups>(*opts.timeout, global_rank, size);
  std::vector<detail::KindGroup> created = planned_groups(layout, global_rank, sharing, mpi::Communicator(), 0.0);
  // Declared after `created`, so that on a failure the NCCL communicators go first. Every
  // wait below is bounded (the bootstrap's, gloo's and NCCL's polling), so no watchdog.
  std::unique_ptr<detail::DeviceGroups> device_groups;
  for (const CreationStep& step : planned.steps) {
    if (step.kind == StepKind::agreement) continue;  // done above
    announce(opts, step);
    switch (step.kind) {
      case StepKind::node:
        state_.processes_on_node = bootstrap.local_size();
        state_.local_rank_on_node = bootstrap.local_rank();
        break;
      case StepKind::device:
        device_groups = detail::DeviceGroups::bind(
            [&bootstrap, &opts](const std::exception_ptr& local, std::string_view what) {
              require_success_everywhere(bootstrap, local, what, *opts.timeout);
            },
            opts.device, state_.local_rank_on_node);
        state_.bound_device = device_groups->device();
        break;
      case StepKind::gloo: {
        // Every kind in one step (one exchange of addresses for all), whose time the
        // world's kind carries.
        const auto start = Clock::now();
        detail::connect_gloo_kinds(created, live->gloo_world, layout, global_rank, bootstrap, *opts.timeout);
        if (const std::optional<std::size_t> world = layout.world_kind()) {
          created[*world].creation_seconds = seconds_since(start);
        }
        break;
      }
      case StepKind::nccl:
        device_groups->create(layout, global_rank, bootstrap_broadcast(bootstrap, *opts.timeout), no_group_broadcast(),
                              wait_limit(*opts.timeout), sharing);
        break;
      default: break;  // the MPI constructor's steps
    }
  }
  live->groups = std::move(created);
  live->device_groups = std::move(device_groups);
  state_.live = std::move(live);
}

ParallelContext::~ParallelContext() = default;
ParallelContext::ParallelContext(ParallelContext&& other) noexcept = default;
ParallelContext& ParallelContext::operator=(ParallelContext&& other) noexcept = default;

void ParallelContext::destroy() {
  if (!state_.live) return;
  // Taken out first: whatever destroy() throws, the context holds nothing afterwards.
  const std::unique_ptr<detail::LiveGroups> live = std::move(state_.live);
  live->destroy();
}

namespace detail {
namespace {
std::atomic<std::uint64_t> next_live_id{1};

int as_int(std::int64_t value) noexcept { return static_cast<int>(value); }
}  // namespace

LiveGroups::LiveGroups(std::chrono::milliseconds timeout, std::int64_t rank, std::int64_t world_size)
    : id_(next_live_id.fetch_add(1, std::memory_order_relaxed)),
      timeout_(timeout),
      rank_(as_int(rank)),
      world_size_(as_int(world_size)) {}

LiveGroups::~LiveGroups() { destroy_quietly(); }

bool LiveGroups::holds_nothing() const noexcept {
  return groups.empty() && world.is_null() && !device_groups && !gloo_world;
}

// MPI_Comm_free is collective in the standard, and an implementation may wait in it for
// the other ranks; so freeing runs under a watchdog, as creation does. The deadline is
// unlimited (no thread at all) when there is nothing to free or MPI is gone.
void LiveGroups::destroy() {
  const mpi::Deadline deadline = holds_nothing() || !mpi::is_running() ? mpi::Deadline() : mpi::Deadline(timeout_);
  Watchdog watchdog(deadline, rank_, world_size_);
  const auto guard = watchdog.enter_if_possible(kDestroyStep);
  // The NCCL communicators first: they were created after (and from) the MPI ones.
  std::exception_ptr device_failure;
  if (device_groups) {
    try {
      device_groups->destroy();
    } catch (...) {
      device_failure = std::current_exception();
    }
    device_groups.reset();
  }
  std::optional<BackendError> first_failure;
  for (auto it = groups.rbegin(); it != groups.rend(); ++it) {
    try {
      it->comm.free();
    } catch (const BackendError& error) {
      if (!first_failure) first_failure = error;
    }
  }
  groups.clear();
  try {
    world.free();
  } catch (const BackendError& error) {
    if (!first_failure) first_failure = error;
  }
  world = mpi::Communicator();
  gloo_world.reset();  // gloo's contexts close their connections alone, no collective
  if (device_failure) std::rethrow_exception(device_failure);
  if (first_failure) throw *first_failure;
}

void LiveGroups::destroy_quietly() noexcept {
  if (holds_nothing()) return;
  // Best effort: without a watchdog (no thread could be started), the handles are still
  // freed.
  std::optional<Watchdog> watchdog;
  try {
    watchdog.emplace(!mpi::is_running() ? mpi::Deadline() : mpi::Deadline(timeout_), rank_, world_size_);
  } catch (...) {
    watchdog.reset();
  }
  const auto guard = watchdog ? watchdog->enter_if_possible(kDestroyStep) : Watchdog::Guard(nullptr);
  device_groups.reset();  // NCCL before MPI, as in destroy()
  while (!groups.empty()) groups.pop_back();
  world = mpi::Communicator();
  gloo_world.reset();
}

}  // namespace detail
}  // namespace pgroups
