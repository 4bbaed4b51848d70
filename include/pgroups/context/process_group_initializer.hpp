#pragma once
/// \file
/// The seed's API in C++: Colossal-AI's `process_group_initializer` classes
/// (ProcessGroupInitializer, Initializer_Data ... Initializer_3D), with Colossal-AI's
/// constructor parameters and an init_dist_group() that returns the seed's fields
/// (docs/reference/seed-api.md puts each beside its Python signature). They are a second front
/// door to the one engine, not a second engine: the groups come from the Layout and are
/// created by the MPI creation strategies (pgroups/mpi/strategy.hpp) that ParallelContext
/// uses, after the same validation, agreement and timeout rules (parallel_context.hpp).
///
/// init_dist_group() is collective over `world` (MPI_COMM_WORLD unless another is
/// given); every rank of it must construct the same initializer class with the same
/// arguments (its own rank aside) and call init_dist_group() together. It builds a
/// ParallelContext for plan_config() over `world`, restricted to the class's modes, and
/// takes their communicators over: the construction steps, agreement, carried errors,
/// timeouts and watchdog are the context's (parallel_context.hpp), with sharing off
/// (Colossal-AI's destroy() frees one communicator per mode) and the class and its
/// modes agreed on with the configuration (" settings=initializer=Initializer_2D
/// modes=2d_row,2d_col", before options.agreed_settings). So:
///   - a `rank` or `world_size` argument that is not this process's rank or the
///     communicator's size is this rank's ConfigError, carried into the agreement:
///     every rank throws it ("rank 0 hit before the configuration agreement: rank 9
///     given to Initializer_Data is not this process's rank 0 in the communicator");
///   - ranks that hold different configurations or classes throw MismatchError on
///     every rank ("configuration mismatch across 4 ranks: ...");
///   - then, on every rank alike: ConfigError for an invalid plan (Layout), for data *
///     pipeline * tensor other than the world size, or for a backend other than MPI;
///     StateError for a mode the plan lacks (Initializer_Pipeline with pipeline size 1);
///   - then one collective per mode (options.strategy), in the order the seed returns
///     them, under the context's timeout (options.timeout, else PGROUPS_TIMEOUT, else
///     300 s) and watchdog; ContextOptions::before_step sees "duplicate", "agreement",
///     "node" and the name of each mode created.
/// MPI must be running (StateError "Initializer_Data.init_dist_group() cannot run before
/// MPI_Init: ...", on this rank, before any collective). Nothing is half-built: whatever
/// is thrown, every communicator created so far is freed.

// The seed's classes build MPI communicators: a build without MPI (pgroups::context's
// PGROUPS_CONTEXT_WITH_MPI=0) has none of them.
#if !defined(PGROUPS_CONTEXT_WITH_MPI) || PGROUPS_CONTEXT_WITH_MPI

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "pgroups/context/context_options.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_config.hpp"
#include "pgroups/layout/parallel_mode.hpp"
#include "pgroups/mpi/communicator.hpp"

namespace pgroups {

/// One group of init_dist_group(): the seed's tuple (local_rank, group_world_size,
/// process_group, ranks_in_group, mode), plus the seconds its creation took.
struct DistGroup {
  std::int64_t local_rank = 0;
  std::int64_t group_world_size = 1;
  /// This rank's communicator of the mode, owned (freed with the DistGroup), its ranks
  /// ordered by local rank, with MPI_ERRORS_RETURN.
  mpi::Communicator process_group;
  /// The global ranks of the group, by local rank.
  std::vector<std::int64_t> ranks_in_group;
  ParallelMode mode = ParallelMode::global;
  double creation_seconds = 0.0;
};

/// The base of the initializers: knows the configuration, creates groups of given modes.
/// The sizes are Colossal-AI's arguments; `config` supplies what they do not (seed,
/// legacy_sequence_dp, and for Initializer_Data/_Model/_Pipeline/_Tensor the tensor
/// mode and depth when config.tensor_size equals tensor_parallel_size). Constructing
/// validates nothing and calls no MPI: errors come from init_dist_group(), on every rank.
class ProcessGroupInitializer {
 public:
  ProcessGroupInitializer(std::int64_t rank, std::int64_t world_size, const ParallelConfig& config,
                          std::int64_t data_parallel_size, std::int64_t pipeline_parallel_size,
                          std::int64_t tensor_parallel_size);
  virtual ~ProcessGroupInitializer() = default;
  ProcessGroupInitializer(const ProcessGroupInitializer&) = default;
  ProcessGroupInitializer& operator=(const ProcessGroupInitializer&) = default;

  [[nodiscard]] std::int64_t rank() const noexcept { return rank_; }
  [[nodiscard]] std::int64_t world_size() const noexcept { return world_size_; }
  [[nodiscard]] const ParallelConfig& config() const noexcept { return config_; }
  [[nodiscard]] std::int64_t data_parallel_size() const noexcept { return data_parallel_size_; }
  [[nodiscard]] std::int64_t pipeline_parallel_size() const noexcept { return pipeline_parallel_size_; }
  [[nodiscard]] std::int64_t tensor_parallel_size() const noexcept { return tensor_parallel_size_; }

  /// Colossal-AI's class name ("Initializer_2D"), for messages and the agreement.
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// The modes init_dist_group() creates, in the order it returns them.
  [[nodiscard]] virtual std::vector<ParallelMode> modes() const = 0;
  /// The configuration the groups are computed from (sizes from the arguments, the
  /// class's tensor mode). Pure; the Layout of it may still throw ConfigError.
  [[nodiscard]] ParallelConfig plan_config() const;

  /// Creates every mode of modes(), as the file comment says, and returns them in that
  /// order: the list form every initializer has (the subclasses' init_dist_group()
  /// returns one DistGroup or this list, as the seed does).
  [[nodiscard]] std::vector<DistGroup> create_dist_groups(MPI_Comm world = MPI_COMM_WORLD,
                                                          ContextOptions options = {}) const;

 protected:
  /// The tensor mode the subclass stands for. The mode-independent ones (Data, Model,
  /// Pipeline, Tensor) take config's mode and depth when config.tensor_size is
  /// tensor_parallel_size, and none otherwise: their groups are the same either way.
  [[nodiscard]] virtual TensorMode tensor_mode() const;
  /// The 2.5D depth (Initializer_2p5D's argument; config's for the mode-independent ones).
  [[nodiscard]] virtual std::optional<std::int64_t> depth() const;

 private:
  std::int64_t rank_;
  std::int64_t world_size_;
  ParallelConfig config_;
  std::int64_t data_parallel_size_;
  std::int64_t pipeline_parallel_size_;
  std::int64_t tensor_parallel_size_;
};

/// An initializer whose init_dist_group() returns one DistGroup (the seed's Tuple).
class SingleGroupInitializer : public ProcessGroupInitializer {
 public:
  using ProcessGroupInitializer::ProcessGroupInitializer;
  [[nodiscard]] DistGroup init_dist_group(MPI_Comm world = MPI_COMM_WORLD, ContextOptions options = {}) const;
};

/// An initializer whose init_dist_group() returns a list (the seed's "list of Tuples").
class MultiGroupInitializer : public ProcessGroupInitializer {
 public:
  using ProcessGroupInitializer::ProcessGroupInitializer;
  [[nodiscard]] std::vector<DistGroup> init_dist_group(MPI_Comm world = MPI_COMM_WORLD,
                                                       ContextOptions options = {}) const {
    return create_dist_groups(world, std::move(options));
  }
};

/// DATA: ranks that differ only in their data-parallel index.
class Initializer_Data final : public SingleGroupInitializer {
 public:
  using SingleGroupInitializer::SingleGroupInitializer;
  [[nodiscard]] std::string_view name() const override { return "Initializer_Data"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override { return {ParallelMode::data}; }
};

/// MODEL: the pipeline * tensor ranks of one model replica.
class Initializer_Model final : public SingleGroupInitializer {
 public:
  using SingleGroupInitializer::SingleGroupInitializer;
  [[nodiscard]] std::string_view name() const override { return "Initializer_Model"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override { return {ParallelMode::model}; }
};

/// PIPELINE: ranks that differ only in their stage; a list of one (as the seed says).
/// With pipeline size 1 there is no such mode: StateError on every rank.
class Initializer_Pipeline final : public MultiGroupInitializer {
 public:
  using MultiGroupInitializer::MultiGroupInitializer;
  [[nodiscard]] std::string_view name() const override { return "Initializer_Pipeline"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override { return {ParallelMode::pipe}; }
};

/// TENSOR: the tensor_parallel_size consecutive ranks of one tensor group.
class Initializer_Tensor final : public SingleGroupInitializer {
 public:
  using SingleGroupInitializer::SingleGroupInitializer;
  [[nodiscard]] std::string_view name() const override { return "Initializer_Tensor"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override { return {ParallelMode::tensor}; }
};

/// PARALLEL_1D: the tensor group under mode 1d.
class Initializer_1D final : public SingleGroupInitializer {
 public:
  using SingleGroupInitializer::SingleGroupInitializer;
  [[nodiscard]] std::string_view name() const override { return "Initializer_1D"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override { return {ParallelMode::tensor_1d}; }

 protected:
  [[nodiscard]] TensorMode tensor_mode() const override { return TensorMode::tensor_1d; }
};

/// SEQUENCE_DP alone (Colossal-AI's helper class of Initializer_Sequence).
class Initializer_Sequence_DP final : public SingleGroupInitializer {
 public:
  using SingleGroupInitializer::SingleGroupInitializer;
  [[nodiscard]] std::string_view name() const override { return "Initializer_Sequence_DP"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override { return {ParallelMode::sequence_dp}; }

 protected:
  [[nodiscard]] TensorMode tensor_mode() const override { return TensorMode::sequence; }
};

/// SEQUENCE and SEQUENCE_DP (tensor_parallel_size is the sequence size): [sequence,
/// sequence_dp]. The sequence_dp groups follow config.legacy_sequence_dp (spec §3).
class Initializer_Sequence final : public MultiGroupInitializer {
 public:
  using MultiGroupInitializer::MultiGroupInitializer;
  [[nodiscard]] std::string_view name() const override { return "Initializer_Sequence"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override {
    return {ParallelMode::sequence, ParallelMode::sequence_dp};
  }

 protected:
  [[nodiscard]] TensorMode tensor_mode() const override { return TensorMode::sequence; }
};

/// PARALLEL_2D_ROW and PARALLEL_2D_COL of a q x q SUMMA grid: [row, col].
class Initializer_2D final : public MultiGroupInitializer {
 public:
  using MultiGroupInitializer::MultiGroupInitializer;
  [[nodiscard]] std::string_view name() const override { return "Initializer_2D"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override {
    return {ParallelMode::tensor_2d_row, ParallelMode::tensor_2d_col};
  }

 protected:
  [[nodiscard]] TensorMode tensor_mode() const override { return TensorMode::tensor_2d; }
};

/// Tesseract (2.5D), with its depth as the seventh argument: [col, row, dep, xz].
class Initializer_2p5D final : public MultiGroupInitializer {
 public:
  Initializer_2p5D(std::int64_t rank, std::int64_t world_size, const ParallelConfig& config,
                   std::int64_t data_parallel_size, std::int64_t pipeline_parallel_size,
                   std::int64_t tensor_parallel_size, std::int64_t depth)
      : MultiGroupInitializer(rank, world_size, config, data_parallel_size, pipeline_parallel_size,
                              tensor_parallel_size),
        depth_(depth) {}
  [[nodiscard]] std::string_view name() const override { return "Initializer_2p5D"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override {
    return {ParallelMode::tensor_2p5d_col, ParallelMode::tensor_2p5d_row, ParallelMode::tensor_2p5d_dep,
            ParallelMode::tensor_2p5d_xz};
  }

 protected:
  [[nodiscard]] TensorMode tensor_mode() const override { return TensorMode::tensor_2p5d; }
  [[nodiscard]] std::optional<std::int64_t> depth() const override { return depth_; }

 private:
  std::int64_t depth_;
};

/// 3D: [input, weight, output, input_x_weight, output_x_weight].
class Initializer_3D final : public MultiGroupInitializer {
 public:
  using MultiGroupInitializer::MultiGroupInitializer;
  [[nodiscard]] std::string_view name() const override { return "Initializer_3D"; }
  [[nodiscard]] std::vector<ParallelMode> modes() const override {
    return {ParallelMode::tensor_3d_input, ParallelMode::tensor_3d_weight, ParallelMode::tensor_3d_output,
            ParallelMode::tensor_3d_input_x_weight, ParallelMode::tensor_3d_output_x_weight};
  }

 protected:
  [[nodiscard]] TensorMode tensor_mode() const override { return TensorMode::tensor_3d; }
};

}  // namespace pgroups

#endif  // PGROUPS_CONTEXT_WITH_MPI
