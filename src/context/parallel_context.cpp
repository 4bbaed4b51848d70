#include "pgroups/context/parallel_context.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "creation_request.hpp"
#include "device_groups.hpp"
#include "live_groups.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/creation_steps.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/layout/agreement_record.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "transport.hpp"

namespace pgroups {
namespace {

void announce(const ContextOptions& options, const CreationStep& step) {
  if (options.before_step) options.before_step(step.name);
}

// The steps a context runs, and the kinds it creates, from a configuration checked
// against the transport's world; the layout is made into `layout`. What an invalid
// configuration or an unbuilt backend throws is kept in `invalid` (before any collective).
struct PlannedSteps {
  std::vector<CreationStep> steps;
  std::vector<bool> selected;
};

PlannedSteps planned_steps(const ParallelConfig& resolved, const detail::Transport& transport, Backend backend,
                           const detail::CreationRequest& request, std::optional<Layout>& layout,
                           std::exception_ptr& invalid) {
  PlannedSteps planned;
  try {
    // The same on every rank once they agree on the backend, as the configuration is.
    require_backend_built(backend);
    if (resolved.world_size != transport.size()) {
      throw ConfigError(fmt::format("world size {} was given, but the {} has {} ranks", resolved.world_size,
                                    transport.world_name(), transport.size()));
    }
    layout.emplace(resolved);
    planned.steps = transport.steps(*layout, backend);
    planned.selected =
        request.select_kinds ? request.select_kinds(*layout) : std::vector<bool>(layout->group_kinds().size(), true);
  } catch (...) {
    invalid = std::current_exception();
  }
  return planned;
}

// One entry per kind, before any is created: membership, sizes, sharing.
std::vector<detail::KindGroup> planned_groups(const Layout& layout, std::int64_t global_rank,
                                              const std::vector<KindSharing>& sharing) {
  std::vector<detail::KindGroup> created(layout.group_kinds().size());
  for (std::size_t kind = 0; kind < created.size(); ++kind) {
    detail::KindGroup& entry = created[kind];
    entry.member = layout.is_member(global_rank, kind);
    entry.size = layout.group_size(kind);
    entry.sharing = sharing[kind];
    if (entry.member) entry.local_rank = layout.local_rank(global_rank, kind);
  }
  return created;
}

}  // namespace

std::string agreement_text(const ParallelConfig& config, const ContextOptions& options,
                           std::string_view node_info_source) {
  std::string text = fmt::format("{} node_info={} backend={} strategy={}", config_setting_text(config),
                                 node_info_source, backend_name(options.backend), strategy_name(options.strategy));
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
  fields.emplace_back("strategy", std::string(strategy_name(options.strategy)));
  fields.emplace_back("settings", options.agreed_settings);
  fields.emplace_back("text", agreement_text(config, options, node_info_source));
  return encode_settings(fields);
}

ParallelContext::ParallelContext(const ParallelConfig& config, MpiComm world, ContextOptions options)
    : ParallelContext(config, world, std::move(options), detail::CreationRequest{}) {}

ParallelContext::ParallelContext(const ParallelConfig& config, MpiComm world, ContextOptions options,
                                 const detail::CreationRequest& request) {
  state_.options = std::move(options);
  build(config, *detail::mpi_transport(world), request);
}

ParallelContext::ParallelContext(const ParallelConfig& config, Bootstrap& bootstrap, ContextOptions options) {
  state_.options = std::move(options);
  build(config, *detail::bootstrap_transport(bootstrap), {});
}

void ParallelContext::build(const ParallelConfig& config, detail::Transport& transport,
                            const detail::CreationRequest& request) {
  ContextOptions& opts = state_.options;
  // Resolved before any collective, so that a malformed PGROUPS_TIMEOUT never fails
  // half-way; options() then reports the timeout in effect.
  opts.timeout = resolve_timeout(opts.timeout);
  transport.start(*opts.timeout);
  const int size = transport.size();
  state_.global_rank = transport.rank();
  const std::int64_t global_rank = state_.global_rank;

  ParallelConfig resolved = config;
  // A mesh's world size may be left to its sizes; the world's must then match.
  if (resolved.world_size == 0) resolved.world_size = size;
  // Validate before any collective, report after the agreement: a rank must not leave
  // before the others know whether they all hold the same plan, or they would wait for
  // it forever. Without a valid plan only the steps up to the agreement run; they are the
  // same for every plan, and wait without blocking, so a rank that never arrives makes
  // the others throw TimeoutError there.
  std::exception_ptr invalid;
  const PlannedSteps planned = planned_steps(resolved, transport, opts.backend, request, state_.layout, invalid);
  transport.before_agreement(opts);
  announce(opts, creation_step(StepKind::agreement));
  // A rank that carries its own error agrees on it instead of its settings, so that every
  // rank throws it.
  transport.agree(request.own_error ? encode_error(request.own_error->kind, request.own_error->message)
                                    : agreement_record(resolved, opts, transport.node_source()));
  if (invalid) std::rethrow_exception(invalid);

  // Built aside and moved in at the end: if anything throws, these locals free every
  // communicator created so far and the context never becomes initialized.
  const Layout& layout = *state_.layout;
  const std::vector<KindSharing> sharing = communicator_sharing(layout, opts.share_communicators, planned.selected);
  // Allocated before any communicator, so that nothing can fail between the last
  // creation and the hand-over.
  auto live = std::make_unique<detail::LiveGroups>(*opts.timeout, global_rank, size);
  std::vector<detail::KindGroup> created = planned_groups(layout, global_rank, sharing);
  transport.prepare(created, layout);
  // Declared after `created`, so that on a failure the NCCL communicators go first.
  std::unique_ptr<detail::DeviceGroups> device_groups;
  for (const CreationStep& step : planned.steps) {
    if (step.waits_without_blocking()) continue;  // done above
    if (step.kind == StepKind::group && !planned.selected[*step.group_kind]) continue;
    announce(opts, step);
    const std::unique_ptr<detail::StepGuard> guard = transport.guard(step);
    switch (step.kind) {
      case StepKind::node: {
        const detail::NodeCount node = transport.node();
        state_.processes_on_node = node.processes;
        state_.local_rank_on_node = node.local_rank;
        break;
      }
      case StepKind::device:
        // Before any group kind, so that a rank without a GPU fails the job before it
        // has spent a collective per kind.
        device_groups = detail::DeviceGroups::bind(transport.outcome(), opts.device, state_.local_rank_on_node);
        state_.bound_device = device_groups->device();
        break;
      case StepKind::group:
      case StepKind::gloo: transport.create(step, layout, created, *live, opts); break;
      case StepKind::nccl:
        // Each NCCL step polls under its own limit; zero means none (wait_limit).
        device_groups->create(layout, global_rank, transport.world_broadcast(), transport.kind_broadcast(created),
                              wait_limit(*opts.timeout), sharing);
        break;
      case StepKind::duplicate:
      case StepKind::agreement: break;
    }
  }
  transport.finish(layout, created, *live);
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
// the other ranks; so freeing runs under the MPI transport's teardown guard, as creation
// does.
void LiveGroups::destroy() {
  const std::unique_ptr<StepGuard> guard = holds_nothing() ? nullptr : teardown_guard(timeout_, rank_, world_size_);
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
  world = MpiHandle();
  gloo_world.reset();  // gloo's contexts close their connections alone, no collective
  if (device_failure) std::rethrow_exception(device_failure);
  if (first_failure) throw *first_failure;
}

void LiveGroups::destroy_quietly() noexcept {
  if (holds_nothing()) return;
  // Best effort: without a guard, the handles are still freed.
  const std::unique_ptr<StepGuard> guard = teardown_guard(timeout_, rank_, world_size_);
  device_groups.reset();  // NCCL before MPI, as in destroy()
  while (!groups.empty()) groups.pop_back();
  world = MpiHandle();
  gloo_world.reset();
}

}  // namespace detail
}  // namespace pgroups
