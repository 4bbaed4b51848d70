#include "pgroups/context/process_group_initializer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <string>

#include "creation_request.hpp"
#include "live_groups.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/mpi/session.hpp"

namespace pgroups {

ProcessGroupInitializer::ProcessGroupInitializer(std::int64_t rank, std::int64_t world_size,
                                                 const ParallelConfig& config, std::int64_t data_parallel_size,
                                                 std::int64_t pipeline_parallel_size, std::int64_t tensor_parallel_size)
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
  mpi::require_running(fmt::format("{}.init_dist_group() cannot run", name()));
  const mpi::Communicator borrowed = mpi::Communicator::borrow(world);
  const int size = borrowed.size();
  const int me = borrowed.rank();

  // Everything else is ParallelContext's construction, restricted to this class's
  // kinds: its validation, agreement, carried errors, timeout and watchdog.
  detail::CreationRequest request;
  // A wrong rank or world-size argument is this rank's own error, carried into the
  // agreement so that every rank throws it.
  if (rank_ != me) {
    request.own_error = detail::OwnError{
        "ConfigError",
        fmt::format("rank {} given to {} is not this process's rank {} in the communicator", rank_, name(), me)};
  } else if (world_size_ != size) {
    request.own_error = detail::OwnError{
        "ConfigError",
        fmt::format("world size {} given to {} is not the communicator's size {}", world_size_, name(), size)};
  }
  // Checks of the plan the same on every rank, thrown on every rank after the agreement.
  request.select_kinds = [this, backend = options.backend](const Layout& layout) {
    if (backend != Backend::mpi) {
      throw ConfigError(
          fmt::format("{} creates MPI communicators only (backend mpi); backend {} was asked for: use "
                      "a ParallelContext for NCCL communicators",
                      name(), backend_name(backend)));
    }
    const std::int64_t product = data_parallel_size_ * pipeline_parallel_size_ * tensor_parallel_size_;
    if (product != world_size_) {
      throw ConfigError(fmt::format(
          "data parallel size {} * pipeline size {} * tensor size {} = {} is not the world size {}: the data "
          "parallel size must be world size / (pipeline * tensor)",
          data_parallel_size_, pipeline_parallel_size_, tensor_parallel_size_, product, world_size_));
    }
    std::vector<bool> selected(layout.group_kinds().size(), false);
    for (ParallelMode mode : modes()) {
      if (!layout.has_kind(mode)) {
        throw StateError(fmt::format("{} creates mode '{}', which the plan ({}) does not have{}", name(),
                                     mode_name(mode), describe(layout.config()),
                                     mode == ParallelMode::pipe ? ": the pipeline size is 1" : ""));
      }
      selected[layout.kind_of(mode)] = true;
    }
    return selected;
  };
  // Colossal-AI's destroy() frees every mode's group itself: one communicator per kind.
  options.share_communicators = false;
  // The class and its modes decide the collectives: agreed on with the configuration.
  std::vector<std::string> mode_names;
  for (ParallelMode mode : modes()) mode_names.emplace_back(mode_name(mode));
  options.agreed_settings = fmt::format("initializer={} modes={}{}{}", name(), fmt::join(mode_names, ","),
                                        options.agreed_settings.empty() ? "" : " ", options.agreed_settings);

  ParallelContext context(plan_config(), world, std::move(options), request);
  const Layout& layout = context.layout();
  std::vector<DistGroup> result;
  result.reserve(modes().size());
  for (ParallelMode mode : modes()) {
    const std::size_t kind = layout.kind_of(mode);
    detail::KindGroup& created = context.state_.live->groups[kind];
    DistGroup group;
    group.process_group = std::move(created.comm);
    group.creation_seconds = created.creation_seconds;
    group.local_rank = created.local_rank;
    group.group_world_size = created.size;
    group.ranks_in_group = layout.group_of(me, kind);
    group.mode = mode;
    result.push_back(std::move(group));
  }
  // What is left (the world's duplicate) is freed under the context's watchdog.
  context.destroy();
  return result;
}

DistGroup SingleGroupInitializer::init_dist_group(MPI_Comm world, ContextOptions options) const {
  std::vector<DistGroup> groups = create_dist_groups(world, std::move(options));
  return std::move(groups.front());
}

}  // namespace pgroups
