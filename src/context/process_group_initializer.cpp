#include "pgroups/context/process_group_initializer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <exception>
#include <optional>
#include <string>

#include "pgroups/context/parallel_context.hpp"
#include "pgroups/layout/creation_steps.hpp"
#include "pgroups/layout/error.hpp"
#include "pgroups/layout/timeout.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/strategy.hpp"
#include "watchdog.hpp"

namespace pgroups {
namespace {

using Clock = std::chrono::steady_clock;

void require_mpi_running(std::string_view who) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized == 0 || finalized != 0) {
    throw StateError(fmt::format("{}.init_dist_group() needs MPI running (between MPI_Init and MPI_Finalize, e.g. "
                                 "inside a pgroups::mpi::Session), but MPI is {}",
                                 who, finalized != 0 ? "finalized" : "not initialized"));
  }
}

void announce(const ContextOptions& options, std::string_view step) {
  if (options.before_step) options.before_step(step);
}

}  // namespace

ProcessGroupInitializer::ProcessGroupInitializer(std::int64_t rank, std::int64_t world_size,
                                                 const ParallelConfig& config, std::int64_t data_parallel_size,
                                                 std::int64_t pipeline_parallel_size,
                                                 std::int64_t tensor_parallel_size)
    : rank_(rank),
      world_size_(world_size),
      config_(config),
      data_parallel_size_(data_parallel_size),
      pipeline_parallel_size_(pipeline_parallel_size),
      tensor_parallel_size_(tensor_parallel_size) {}

TensorMode ProcessGroupInitializer::tensor_mode() const {
  return config_.tensor_size == tensor_parallel_size_ ? config_.tensor_mode : TensorMode::none;
}

std::optional<std::int64_t> ProcessGroupInitializer::depth() const {
  return tensor_mode() == TensorMode::tensor_2p5d ? config_.depth : std::nullopt;
}

ParallelConfig ProcessGroupInitializer::plan_config() const {
  ParallelConfig plan = config_;
  plan.mesh.reset();
  plan.world_size = world_size_;
  plan.pipeline = pipeline_parallel_size_;
  plan.tensor_size = tensor_parallel_size_;
  plan.tensor_mode = tensor_mode();
  plan.depth = depth();
  return plan;
}

std::vector<DistGroup> ProcessGroupInitializer::create_dist_groups(MPI_Comm world, ContextOptions options) const {
  require_mpi_running(name());
  // Resolved before any collective, so that a malformed PGROUPS_TIMEOUT never fails half-way.
  options.timeout = resolve_timeout(options.timeout);
  const mpi::Deadline deadline(*options.timeout);
  const mpi::Communicator borrowed = mpi::Communicator::borrow(world);
  const int size = borrowed.size();
  const int me = borrowed.rank();
  const ParallelConfig plan = plan_config();

  // A wrong rank or world-size argument is this rank's own error; a wrong plan is every
  // rank's. Both wait for the agreement, so that no rank leaves the others in a collective.
  std::exception_ptr own_error;
  if (rank_ != me) {
    own_error = std::make_exception_ptr(ConfigError(fmt::format(
        "rank {} given to {} is not this process's rank {} in the communicator", rank_, name(), me)));
  } else if (world_size_ != size) {
    own_error = std::make_exception_ptr(ConfigError(fmt::format(
        "world size {} given to {} is not the communicator's size {}", world_size_, name(), size)));
  }
  std::exception_ptr invalid;
  std::optional<Layout> layout;
  std::vector<std::size_t> kinds;
  try {
    if (options.backend != Backend::mpi) {
      throw ConfigError(fmt::format("{} creates MPI communicators only (backend mpi); backend {} was asked for: use "
                                    "a ParallelContext for NCCL communicators",
                                    name(), backend_name(options.backend)));
    }
    const std::int64_t product = data_parallel_size_ * pipeline_parallel_size_ * tensor_parallel_size_;
    if (product != world_size_) {
      throw ConfigError(fmt::format(
          "data parallel size {} * pipeline size {} * tensor size {} = {} is not the world size {}: the data "
          "parallel size must be world size / (pipeline * tensor)",
          data_parallel_size_, pipeline_parallel_size_, tensor_parallel_size_, product, world_size_));
    }
    layout.emplace(plan);
    for (ParallelMode mode : modes()) {
      if (!layout->has_mode(mode)) {
        throw StateError(fmt::format("{} creates mode '{}', which the plan ({}) does not have{}", name(),
                                     mode_name(mode), describe(plan),
                                     mode == ParallelMode::pipe ? ": the pipeline size is 1" : ""));
      }
      kinds.push_back(layout->kind_of(mode));
    }
  } catch (const Error&) {
    invalid = std::current_exception();
  }

  const CreationStep duplicate = creation_step(StepKind::duplicate);
  const CreationStep agreement = creation_step(StepKind::agreement);
  announce(options, duplicate.name);
  mpi::Communicator control = mpi::dup_until(borrowed, deadline, {duplicate.name, duplicate.description});
  announce(options, agreement.name);
  std::vector<std::string> mode_names;
  for (ParallelMode mode : modes()) mode_names.emplace_back(mode_name(mode));
  const std::string text = fmt::format("{} initializer={} modes={} arguments={}", agreement_text(plan, options, "-"),
                                       name(), fmt::join(mode_names, ","), own_error ? "wrong" : "ok");
  try {
    mpi::require_identical(control, text, "initializer configuration", deadline);
  } catch (const MismatchError&) {
    if (own_error) std::rethrow_exception(own_error);
    throw;
  }
  if (invalid) std::rethrow_exception(invalid);

  std::vector<DistGroup> result;
  result.reserve(kinds.size());
  detail::Watchdog watchdog(deadline, me, size);
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const std::size_t kind = kinds[i];
    const std::string& step_name = layout->group_kinds()[kind].name;
    announce(options, step_name);
    const std::string description = fmt::format("the creation of the '{}' groups", step_name);
    const auto guard = watchdog.enter({step_name, description});
    const auto start = Clock::now();
    DistGroup group;
    group.process_group = mpi::create_group_communicator(control, *layout, kind, options.strategy);
    group.creation_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    group.local_rank = layout->local_rank(me, kind);
    group.group_world_size = layout->group_size(kind);
    group.ranks_in_group = layout->group_of(me, kind);
    group.mode = modes()[i];
    result.push_back(std::move(group));
  }
  return result;
}

DistGroup SingleGroupInitializer::init_dist_group(MPI_Comm world, ContextOptions options) const {
  std::vector<DistGroup> groups = create_dist_groups(world, std::move(options));
  return std::move(groups.front());
}

}  // namespace pgroups
