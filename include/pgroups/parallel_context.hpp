#pragma once
/// \file
/// ParallelContext: the live process groups of one job, i.e. a communicator for every
/// mode of a Layout, and what each rank can ask about them (docs/spec.md §6, the answers of
/// Colossal-AI's ParallelContext).
///
/// Construction is collective over the world communicator and happens in this order:
///   1. the configuration is resolved (world size 0 = the communicator's size) and the
///      whole plan is validated locally by building the Layout, without throwing yet;
///   2. the world communicator is duplicated (the copy becomes the `global` group, and
///      pgroups' own traffic never mixes with the application's);
///   3. one MPI_Allreduce checks that every rank holds the same configuration and
///      strategy; on disagreement every rank throws MismatchError (the message contains
///      "mismatch" and says which ranks hold what);
///   4. only then, if the plan is invalid, every rank throws the same ConfigError;
///   5. the node is queried (MPI_COMM_TYPE_SHARED);
///   6. with options.backend == Backend::nccl, this rank's CUDA device is bound (see
///      device()) and every rank agrees on the outcome: if any rank has no device, every
///      rank throws before any NCCL call (the failed ranks their own error, BackendError
///      "backend nccl needs a CUDA device, but none is visible ..." when none is
///      visible; the others BackendError naming them);
///   7. each mode's MPI communicator is created with options.strategy, in creation
///      order; with the NCCL backend these stay the CPU groups (get_cpu_group);
///   8. with the NCCL backend, the NCCL world is created (its unique id broadcast over
///      MPI), then one ncclCommSplit of it per mode, in the same order; each NCCL step
///      waits at most options.timeout (no limit when it is zero).
/// ConfigError and MismatchError are therefore thrown on every rank alike, and no rank
/// is left waiting in a collective. BackendError (an MPI or NCCL failure) may be local
/// to one rank; after it, other ranks can be blocked in a collective (NCCL steps end at
/// their timeout, aborting what they created), and a program should end the job
/// (mpi::abort_job). Whatever is thrown, every communicator created so far, NCCL and
/// MPI, is freed (NCCL ones aborted) before the exception leaves the constructor.
///
/// Timeouts (options.timeout, else PGROUPS_TIMEOUT, else 300 s; pgroups/timeout.hpp):
/// construction must end within the timeout, counted from its start, so that a rank that
/// stalls or dies cannot keep the others waiting forever. Steps 2 and 3 wait without
/// blocking: past the deadline this rank frees what it created and throws TimeoutError
/// naming the step, e.g. "timed out after 5 s waiting for all ranks at the configuration
/// agreement (step 'agreement', rank 0 of 4)"; ranks that did arrive may be blocked in a
/// later step, so a program should then end the job (mpi::abort_job with
/// ExitCode::timeout). Every later step blocks inside MPI, which cannot be cancelled: a
/// watchdog thread, armed for each such step, prints the same message on stderr if the
/// step is still running at the deadline and ends the process with ExitCode::timeout
/// (MPI_Abort at MPI_THREAD_MULTIPLE, otherwise std::_Exit, after which the launcher ends
/// the job). destroy() and the destructor free under a watchdog with the same timeout.
/// The watchdog never outlives the step it guards. A zero timeout turns all this off.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memory>

#include "pgroups/backend.hpp"
#include "pgroups/context_options.hpp"
#include "pgroups/group_handle.hpp"
#include "pgroups/layout.hpp"
#include "pgroups/mpi/communicator.hpp"
#include "pgroups/parallel_config.hpp"
#include "pgroups/parallel_mode.hpp"

namespace pgroups {

namespace detail {
class DeviceGroups;
}  // namespace detail

/// One mode's device check (ParallelContext::check_device_groups): the all-reduced sum
/// of the group's global ranks, against the sum the layout gives.
struct DeviceGroupCheck {
  ParallelMode mode = ParallelMode::global;
  std::int64_t expected = 0;
  std::int64_t actual = 0;
  [[nodiscard]] bool ok() const noexcept { return expected == actual; }
};

class ParallelContext {
 public:
  /// Builds every communicator of `config` over `world` (borrowed: never freed, its
  /// error handler untouched), as described above. A non-zero config.world_size must
  /// equal the size of `world` (ConfigError otherwise). Precondition: every rank of
  /// `world` calls this together. Cost per rank: O(modes) collectives for `split` and
  /// `create_group`, O(total group count) for `per_group`, plus three (dup, agreement,
  /// node query); with the NCCL backend, one more MPI collective (the device agreement),
  /// the NCCL world and one ncclCommSplit per mode. Throws as described in the file
  /// comment; ConfigError on every rank when options.backend was not built into pgroups
  /// (the message says how to enable it).
  ParallelContext(const ParallelConfig& config, MPI_Comm world, ContextOptions options = {});

  /// destroy(), ignoring errors.
  ~ParallelContext();

  ParallelContext(const ParallelContext&) = delete;
  ParallelContext& operator=(const ParallelContext&) = delete;
  /// The moved-from context is destroyed (is_initialized is false for every mode).
  ParallelContext(ParallelContext&& other) noexcept;
  ParallelContext& operator=(ParallelContext&& other) noexcept;

  /// The validated plan, with world_size resolved. Stays valid after destroy().
  [[nodiscard]] const Layout& layout() const noexcept { return *layout_; }
  [[nodiscard]] const ParallelConfig& config() const noexcept { return layout_->config(); }
  [[nodiscard]] const ContextOptions& options() const noexcept { return options_; }

  /// Whether `mode`'s communicator exists: it is a mode of the layout and the context
  /// was not destroyed. O(1).
  [[nodiscard]] bool is_initialized(ParallelMode mode) const noexcept;
  /// The initialized modes in creation order; empty after destroy().
  [[nodiscard]] std::vector<ParallelMode> modes() const;

  /// This process's rank in the world. Valid after destroy().
  [[nodiscard]] std::int64_t global_rank() const noexcept { return global_rank_; }

  /// Every per-mode query below throws StateError, naming the mode and the modes that
  /// exist, when !is_initialized(mode). Each is O(1) unless noted.
  [[nodiscard]] std::int64_t local_rank(ParallelMode mode) const;
  [[nodiscard]] std::int64_t world_size(ParallelMode mode) const;
  /// The backend of get_group: options().backend.
  [[nodiscard]] Backend backend() const noexcept { return options_.backend; }
  /// The mode's communicator for the model's traffic, of the context's backend: an NCCL
  /// communicator (GroupHandle::nccl) with Backend::nccl, the MPI one otherwise, as
  /// Colossal-AI's get_group. Valid until destroy(); owned by the context.
  [[nodiscard]] GroupHandle get_group(ParallelMode mode) const;
  /// The mode's MPI communicator for host-side traffic, whatever the backend
  /// (Colossal-AI's get_cpu_group).
  [[nodiscard]] GroupHandle get_cpu_group(ParallelMode mode) const;
  /// The global ranks of this rank's group, by local rank. O(group size).
  [[nodiscard]] std::vector<std::int64_t> ranks_in_group(ParallelMode mode) const;
  /// Global rank of the next / previous member of the group, in ring order (the last
  /// member's next is the first).
  [[nodiscard]] std::int64_t next_global_rank(ParallelMode mode) const;
  [[nodiscard]] std::int64_t prev_global_rank(ParallelMode mode) const;
  [[nodiscard]] bool is_first_rank(ParallelMode mode) const;
  [[nodiscard]] bool is_last_rank(ParallelMode mode) const;
  /// The mode's random seed (Layout::seed for this rank).
  [[nodiscard]] std::int64_t seed(ParallelMode mode) const;
  /// Seconds this rank spent creating the mode's communicators: the MPI one, plus the
  /// device one with the NCCL backend (device_creation_seconds).
  [[nodiscard]] double creation_seconds(ParallelMode mode) const;
  /// Seconds of creation_seconds spent on the mode's NCCL communicator: one
  /// ncclCommSplit, or for `global` binding the device and creating the NCCL world.
  /// 0 with the MPI backend.
  [[nodiscard]] double device_creation_seconds(ParallelMode mode) const;

  /// Collective over the world, NCCL backend only: every mode's NCCL communicator
  /// all-reduces this rank's global rank (ncclAllReduce, in creation order), and each sum
  /// is compared with the layout's. One entry per mode, in creation order; a wrong sum
  /// is reported, not thrown. Throws StateError naming the backend with the MPI backend
  /// or after destroy(); BackendError or TimeoutError (after options().timeout) when NCCL
  /// fails, which aborts that communicator.
  [[nodiscard]] std::vector<DeviceGroupCheck> check_device_groups();

  /// Whether this rank is in the first / last pipeline stage. Without a `pipe` mode
  /// (pipeline size 1) every rank is both. With a virtual pipeline size set and
  /// `ignore_virtual` false, it must also hold the first / last virtual chunk (virtual
  /// rank 0 / size - 1), as in interleaved schedules. Throws StateError after destroy().
  [[nodiscard]] bool is_pipeline_first_stage(bool ignore_virtual = false) const;
  [[nodiscard]] bool is_pipeline_last_stage(bool ignore_virtual = false) const;
  /// Interleaved-pipeline state, per rank (no communication). The size must be at
  /// least 1 or absent, the rank non-negative; ConfigError otherwise.
  void set_virtual_pipeline_parallel_size(std::optional<std::int64_t> size);
  void set_virtual_pipeline_parallel_rank(std::int64_t rank);
  [[nodiscard]] std::optional<std::int64_t> virtual_pipeline_parallel_size() const noexcept {
    return virtual_pipeline_size_;
  }
  [[nodiscard]] std::int64_t virtual_pipeline_parallel_rank() const noexcept { return virtual_pipeline_rank_; }

  /// Processes of the world on this node (MPI_COMM_TYPE_SHARED), and this one's index
  /// among them. Valid after destroy().
  [[nodiscard]] std::int64_t processes_on_node() const noexcept { return processes_on_node_; }
  [[nodiscard]] std::int64_t local_rank_on_node() const noexcept { return local_rank_on_node_; }
  /// This rank's device ordinal. Valid after destroy().
  ///  - With the NCCL backend, the device the constructor bound (cudaSetDevice) and
  ///    created every NCCL communicator on: options.device when given (ConfigError at
  ///    construction if it is not visible), otherwise local_rank_on_node() modulo the
  ///    number of visible devices (nccl::choose_device; the launchers' LOCAL_RANK-style
  ///    variables are not consulted, the MPI shared-memory split counts the processes
  ///    actually on the node). devices_per_node is not used.
  ///  - With the MPI backend nothing is bound, and the value is docs/spec.md §6's advice:
  ///    options.device when given, otherwise global_rank % devices_per_node
  ///    (processes_on_node() when that option is 0).
  /// The two rules agree when every node runs as many consecutive ranks as it has
  /// devices (block placement, one process per GPU), Colossal-AI's setting; the NCCL
  /// rule also holds for round-robin placement and nodes of different sizes.
  [[nodiscard]] std::int64_t device() const noexcept;

  /// Frees every communicator, in reverse creation order: the NCCL ones first (finalized
  /// and destroyed, aborted on failure), then the MPI ones. Afterwards is_initialized is
  /// false for every mode; a second call does nothing. Every handle is freed even if
  /// one fails; the first failure is then thrown (BackendError, or TimeoutError from an
  /// NCCL finalize). Precondition: all ranks destroy together (MPI_Comm_free is
  /// collective, ncclCommDestroy within a node).
  void destroy();

 private:
  struct ModeGroup {
    mpi::Communicator comm;
    std::int64_t local_rank = 0;
    std::int64_t size = 1;
    double creation_seconds = 0.0;
  };

  /// The mode's entry; StateError naming the mode and the initialized ones if none.
  const ModeGroup& group(ParallelMode mode) const;
  void require(ParallelMode mode) const { (void)group(mode); }
  void destroy_quietly() noexcept;

  std::optional<Layout> layout_;
  ContextOptions options_;
  std::int64_t global_rank_ = 0;
  std::int64_t processes_on_node_ = 1;
  std::int64_t local_rank_on_node_ = 0;
  std::optional<std::int64_t> virtual_pipeline_size_;
  std::int64_t virtual_pipeline_rank_ = 0;
  std::array<std::optional<ModeGroup>, kParallelModeCount> groups_{};
  // The NCCL side (bound device, one communicator per mode); null with the MPI backend.
  std::unique_ptr<detail::DeviceGroups> device_groups_;
};

/// The text every rank must agree on before creation: the configuration (world size
/// resolved), where the node query's answer comes from ("launcher" environment or a
/// "shared_memory_split" collective: ranks that disagreed would wait in it forever), the
/// backend and the creation strategy, e.g. "world_size=8 pipeline=2 tensor=4 mode=2d
/// depth=- legacy_sequence_dp=false seed=1024 node_info=launcher backend=mpi
/// strategy=create_group", followed by " settings=<options.agreed_settings>" when those are
/// not empty. Per-rank options (the device, the timeout) are not part of it.
[[nodiscard]] std::string agreement_text(const ParallelConfig& config, const ContextOptions& options,
                                         std::string_view node_info_source = "shared_memory_split");

}  // namespace pgroups
