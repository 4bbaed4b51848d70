#pragma once
/// \file
/// ParallelContext: the live process groups of one job, i.e. a communicator for every
/// group kind of a Layout (a preset's 19 ParallelMode kinds, or a mesh's `--group`
/// tokens: "tp", "tp-dp", "embd", ...), and what each rank can ask about them (docs/reference/spec.md §6,
/// the answers of Colossal-AI's ParallelContext and Megatron-LM's parallel_state). Every
/// query takes the kind's name (`get_group("tp-dp")`; a mesh token also by its dimensions
/// in another order, "dp-tp"); the ParallelMode overloads forward to the name
/// mode_name(mode), and a KindHandle (kind("tp")) saves looking the name up per call.
///
/// Construction is collective over the world communicator and runs the steps of
/// creation_steps() (pgroups/context/creation_steps.hpp), which ContextOptions::before_step
/// sees by name, in this order:
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
///   7. each group kind's MPI communicator is created with options.strategy, in creation
///      order (one collective per kind); with the NCCL backend these stay the CPU groups
///      (get_cpu_group). With options.share_communicators (the default) only the distinct
///      partitions are created: a kind with the groups of an earlier one uses its
///      communicator, a whole-world kind the duplicate, a kind of one-rank groups a local
///      communicator (no collective); see pgroups/layout/communicator_sharing.hpp. A rank
///      outside every group of a partial kind (Megatron's `embd` and `pos_embd`) takes
///      part in the collective and gets no communicator;
///   8. with the NCCL backend, the NCCL world is created (its unique id broadcast over
///      MPI), then one ncclCommSplit of it per kind (per distinct partition when sharing;
///      a one-rank kind's NCCL communicator is made by get_group, by this rank alone), in
///      the same order; each NCCL step
///      waits at most options.timeout (no limit when it is zero).
/// MPI must be running: a context made before MPI_Init or after MPI_Finalize throws
/// StateError, on that rank, before any MPI call.
/// ConfigError and MismatchError are therefore thrown on every rank alike, and no rank
/// is left waiting in a collective. BackendError (an MPI or NCCL failure) may be local
/// to one rank; after it, other ranks can be blocked in a collective (NCCL steps end at
/// their timeout, aborting what they created), and a program should end the job
/// (mpi::abort_job). Whatever is thrown, every communicator created so far, NCCL and
/// MPI, is freed (NCCL ones aborted) before the exception leaves the constructor.
///
/// Timeouts (options.timeout, else PGROUPS_TIMEOUT, else 300 s; pgroups/launch/timeout.hpp):
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

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pgroups/context/backend.hpp"
#include "pgroups/context/context_options.hpp"
#include "pgroups/context/group_handle.hpp"
#include "pgroups/context/mpi_comm.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/layout/group_check.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_config.hpp"
#include "pgroups/layout/parallel_mode.hpp"
#include "pgroups/layout/rank_view.hpp"
#include "pgroups/layout/virtual_pipeline.hpp"

namespace pgroups {

namespace detail {
struct KindGroup;
class LiveGroups;
struct CreationRequest;
class Transport;
}  // namespace detail

/// A neighbour in a group's ring (ParallelContext::next_rank / prev_rank): its rank in
/// the world and its rank in the group's communicator.
struct Neighbour {
  std::int64_t global_rank = 0;
  std::int64_t local_rank = 0;
  friend bool operator==(const Neighbour&, const Neighbour&) = default;
};

class ParallelContext;

/// A group kind of one live ParallelContext, looked up once by name
/// (ParallelContext::kind) so that the per-kind queries need not look the name up again
/// on every call. Cheap to copy; valid while the context it came from holds its
/// communicators (a move hands them, and the handle's validity, to the moved-to
/// context). Given to another context, or after destroy(), a query throws StateError
/// naming the kind; it never answers for the wrong kind.
class KindHandle {
 public:
  /// The kind's name in the layout (its canonical spelling: kind("dp-tp") names "tp-dp").
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// The kind's index in Layout::group_kinds(); empty for the pipeline of a layout
  /// without one (see ParallelContext's queries).
  [[nodiscard]] std::optional<std::size_t> index() const noexcept {
    return index_ == kNoKind ? std::nullopt : std::optional(index_);
  }
  friend bool operator==(const KindHandle&, const KindHandle&) = default;

 private:
  friend class ParallelContext;
  static constexpr std::size_t kNoKind = static_cast<std::size_t>(-1);
  KindHandle(std::string name, std::size_t index, std::uint64_t context) noexcept
      : name_(std::move(name)), index_(index), context_(context) {}
  std::string name_;
  std::size_t index_ = kNoKind;
  std::uint64_t context_ = 0;  // the identity of the communicators it was made for
};

class ParallelContext {
 public:
  /// Builds every communicator of `config` over `world` (borrowed: never freed, its
  /// error handler untouched), as described above. A non-zero config.world_size must
  /// equal the size of `world` (ConfigError otherwise). Precondition: every rank of
  /// `world` calls this together. Cost per rank: one collective per group kind for
  /// `split` and `create_group`, O(total group count) for `per_group`, plus three (dup,
  /// agreement, node query): the steps of creation_steps(); with the NCCL backend, one
  /// more MPI collective (the device agreement), the NCCL world and one ncclCommSplit per
  /// kind. Throws as described in the file comment; ConfigError on every rank when
  /// options.backend was not built into pgroups (the message says how to enable it);
  /// StateError, on this rank and before any collective, when MPI is not running (before
  /// MPI_Init or after MPI_Finalize). With a mesh, world_size 0 means "the communicator's
  /// size", which must then be the product of the mesh's sizes (ConfigError naming both).
  ParallelContext(const ParallelConfig& config, MpiComm world, ContextOptions options = {});

  /// Builds every group of `config` over `bootstrap` (pgroups/launch/bootstrap.hpp: MPI,
  /// PMIx, the environment's TCP store), so that a job with no MPI in it has its groups:
  /// with Backend::gloo one gloo context per group, with Backend::nccl one NCCL
  /// communicator per kind (get_group) beside the gloo contexts as its CPU groups
  /// (get_cpu_group; where this pgroups has no gloo, get_cpu_group throws StateError).
  /// Collective over the bootstrap's world; the steps (bootstrap_creation_steps), each seen
  /// by ContextOptions::before_step:
  ///  - "agreement": the configuration resolved and validated (world size 0 = the
  ///    bootstrap's size), then one all-gather of every rank's agreement record (the same
  ///    record as over MPI, node_info=bootstrap) judged alike on every rank: MismatchError,
  ///    then the ConfigError of an invalid plan, on every rank;
  ///  - "node": the node from the bootstrap (local_rank, local_size);
  ///  - NCCL only, "device": the device bound as over MPI, the outcome agreed over the
  ///    bootstrap (require_success_everywhere), so no rank enters NCCL unless all have one;
  ///  - "gloo": one gloo context per distinct partition this rank is in (sharing, the
  ///    world's and the one-rank context as over MPI), all connected through one more
  ///    all-gather of their addresses (pgroups/gloo/gloo_groups.hpp);
  ///  - NCCL only, "nccl": the NCCL world (rank 0's unique id through the bootstrap), then
  ///    one ncclCommSplit per distinct partition; an NCCL without ncclCommSplit (before
  ///    2.18) is a ConfigError here, its per-group creation needing MPI.
  /// The strategy is agreed on but unused. Every wait is bounded by the timeout
  /// (TimeoutError naming the step and, where the bootstrap knows them, the ranks that did
  /// not arrive), so no watchdog is needed. creation_seconds("global") holds the gloo
  /// connection's time. ConfigError on every rank for Backend::mpi ("built over an MPI
  /// communicator") or a backend this pgroups lacks. destroy() closes the gloo contexts
  /// (no collective) after the NCCL communicators.
  ParallelContext(const ParallelConfig& config, Bootstrap& bootstrap, ContextOptions options = {});

  /// destroy(), ignoring errors.
  ~ParallelContext();

  ParallelContext(const ParallelContext&) = delete;
  ParallelContext& operator=(const ParallelContext&) = delete;
  /// The moved-from context is destroyed (is_initialized is false for every kind); the
  /// context assigned to frees what it held, as destroy() does, ignoring errors.
  ParallelContext(ParallelContext&& other) noexcept;
  ParallelContext& operator=(ParallelContext&& other) noexcept;

  /// The validated plan, with world_size resolved. Stays valid after destroy().
  [[nodiscard]] const Layout& layout() const noexcept { return *state_.layout; }
  [[nodiscard]] const ParallelConfig& config() const noexcept { return state_.layout->config(); }
  [[nodiscard]] const ContextOptions& options() const noexcept { return state_.options; }

  /// The group kinds of the layout, in creation order, whether or not this rank is a
  /// member of one of their groups; empty after destroy(). O(kinds).
  [[nodiscard]] std::vector<std::string> kind_names() const;
  /// The handles (kind()) of kind_names(), in the same order: for a loop over every kind
  /// that asks the per-kind queries without a lookup by name. Empty after destroy(). O(kinds).
  [[nodiscard]] std::vector<KindHandle> kinds() const;
  /// The old name of kind_names(), kept for one release.
  [[deprecated("use kind_names()")]] [[nodiscard]] std::vector<std::string> groups() const { return kind_names(); }
  /// The preset modes among kind_names(), in creation order (empty for a mesh, and after
  /// destroy()).
  [[nodiscard]] std::vector<ParallelMode> modes() const;
  /// Whether the kind exists: the layout has a kind of that name (find_group_kind) and
  /// the context was not destroyed. O(kinds x dimensions), find_group_kind's cost.
  [[nodiscard]] bool is_initialized(std::string_view kind) const noexcept;
  /// False for a value that is no enumerator (a cast from a wrong integer); the other
  /// ParallelMode overloads throw ConfigError naming it (mode_name).
  [[nodiscard]] bool is_initialized(ParallelMode mode) const noexcept {
    return static_cast<std::size_t>(mode) < kParallelModeCount && is_initialized(mode_name(mode));
  }
  /// Whether this rank is in a group of the kind, i.e. has its communicator: always true
  /// except for a partial kind (Megatron's `embd`, `pos_embd`). Throws StateError as the
  /// queries below do for a kind that is not initialized.
  [[nodiscard]] bool is_member(std::string_view kind) const;
  [[nodiscard]] bool is_member(const KindHandle& kind) const;

  /// The kind called `kind` (as is_initialized finds it), for the queries below: each
  /// name overload is kind(name) and the handle overload. Throws the StateError the
  /// queries throw for a kind that is not initialized. O(kinds x dimensions); the
  /// queries taking the handle then skip the lookup (see the cost below).
  [[nodiscard]] KindHandle kind(std::string_view kind) const;
  [[nodiscard]] KindHandle kind(ParallelMode mode) const { return kind(mode_name(mode)); }

  /// This process's rank in the world. Valid after destroy().
  [[nodiscard]] std::int64_t global_rank() const noexcept { return state_.global_rank; }

  /// Every per-kind query below throws StateError when !is_initialized(kind), naming
  /// the kind, the kinds that exist and the closest name, and when this rank is in no
  /// group of the kind (is_member false), saying so. Each costs at most O(dimensions) (a RankView
  /// answer) unless noted, plus, by name or mode, kind()'s O(kinds x dimensions).
  /// Each takes the kind's name, its ParallelMode or its KindHandle (kind()); a handle
  /// of another context, or one used after destroy(), throws StateError naming the kind.
  ///
  /// The pipeline answers as Megatron-LM's does when there is no pipeline (pipeline size
  /// 1, no `pipe` kind for a preset, no `pp` dimension for a mesh): local_rank("pipe")
  /// is 0, world_size 1, ranks_in_group {global_rank()}, the neighbours this rank, and
  /// it is the first and the last rank (stage); only get_group and get_cpu_group throw,
  /// since no communicator was created.
  ///
  /// This rank's rank in its group of the kind (Colossal-AI's get_local_rank,
  /// Megatron's get_*_rank).
  [[nodiscard]] std::int64_t local_rank(std::string_view kind) const;
  [[nodiscard]] std::int64_t local_rank(const KindHandle& kind) const;
  [[nodiscard]] std::int64_t local_rank(ParallelMode mode) const { return local_rank(mode_name(mode)); }
  /// The size of this rank's group of the kind (Colossal-AI's get_world_size, Megatron's
  /// get_*_world_size): the one name for a group's size in pgroups.
  [[nodiscard]] std::int64_t world_size(std::string_view kind) const;
  [[nodiscard]] std::int64_t world_size(const KindHandle& kind) const;
  [[nodiscard]] std::int64_t world_size(ParallelMode mode) const { return world_size(mode_name(mode)); }
  /// The backend of get_group: options().backend.
  [[nodiscard]] Backend backend() const noexcept { return state_.options.backend; }
  /// The kind's communicator for the model's traffic, of the context's backend: an NCCL
  /// communicator (GroupHandle::nccl) with Backend::nccl, the MPI one otherwise, as
  /// Colossal-AI's get_group and Megatron's get_*_group. Valid until destroy(); owned by
  /// the context. Kinds that share a communicator return the same handle (each under its
  /// own name). With NCCL, a kind of one-rank groups has no NCCL communicator until its
  /// first get_group, which creates it on this rank alone (no collective; BackendError
  /// on failure); not thread-safe against another first call.
  [[nodiscard]] GroupHandle get_group(std::string_view kind) const;
  [[nodiscard]] GroupHandle get_group(const KindHandle& kind) const;
  [[nodiscard]] GroupHandle get_group(ParallelMode mode) const { return get_group(mode_name(mode)); }
  /// The kind's MPI communicator for host-side traffic, whatever the backend
  /// (Colossal-AI's get_cpu_group, Megatron's gloo groups).
  [[nodiscard]] GroupHandle get_cpu_group(std::string_view kind) const;
  [[nodiscard]] GroupHandle get_cpu_group(const KindHandle& kind) const;
  [[nodiscard]] GroupHandle get_cpu_group(ParallelMode mode) const { return get_cpu_group(mode_name(mode)); }
  /// The global ranks of this rank's group, by local rank. O(group size).
  [[nodiscard]] std::vector<std::int64_t> ranks_in_group(std::string_view kind) const;
  [[nodiscard]] std::vector<std::int64_t> ranks_in_group(const KindHandle& kind) const;
  [[nodiscard]] std::vector<std::int64_t> ranks_in_group(ParallelMode mode) const {
    return ranks_in_group(mode_name(mode));
  }
  /// The next / previous member of the group, in ring order (the last member's next is
  /// the first): its global rank and its local rank, i.e. its rank in get_group(kind),
  /// the one a send or receive in that communicator names.
  [[nodiscard]] Neighbour next_rank(std::string_view kind) const;
  [[nodiscard]] Neighbour prev_rank(std::string_view kind) const;
  [[nodiscard]] Neighbour next_rank(const KindHandle& kind) const;
  [[nodiscard]] Neighbour prev_rank(const KindHandle& kind) const;
  [[nodiscard]] Neighbour next_rank(ParallelMode mode) const { return next_rank(mode_name(mode)); }
  [[nodiscard]] Neighbour prev_rank(ParallelMode mode) const { return prev_rank(mode_name(mode)); }
  /// next_rank(kind).global_rank and prev_rank(kind).global_rank (Colossal-AI's names).
  [[nodiscard]] std::int64_t next_global_rank(std::string_view kind) const { return next_rank(kind).global_rank; }
  [[nodiscard]] std::int64_t prev_global_rank(std::string_view kind) const { return prev_rank(kind).global_rank; }
  [[nodiscard]] std::int64_t next_global_rank(const KindHandle& kind) const { return next_rank(kind).global_rank; }
  [[nodiscard]] std::int64_t prev_global_rank(const KindHandle& kind) const { return prev_rank(kind).global_rank; }
  [[nodiscard]] std::int64_t next_global_rank(ParallelMode mode) const { return next_global_rank(mode_name(mode)); }
  [[nodiscard]] std::int64_t prev_global_rank(ParallelMode mode) const { return prev_global_rank(mode_name(mode)); }
  [[nodiscard]] bool is_first_rank(std::string_view kind) const;
  [[nodiscard]] bool is_last_rank(std::string_view kind) const;
  [[nodiscard]] bool is_first_rank(const KindHandle& kind) const;
  [[nodiscard]] bool is_last_rank(const KindHandle& kind) const;
  [[nodiscard]] bool is_first_rank(ParallelMode mode) const { return is_first_rank(mode_name(mode)); }
  [[nodiscard]] bool is_last_rank(ParallelMode mode) const { return is_last_rank(mode_name(mode)); }
  /// The kind's random seed (Layout::seed for this rank).
  [[nodiscard]] std::int64_t seed(std::string_view kind) const;
  [[nodiscard]] std::int64_t seed(const KindHandle& kind) const;
  [[nodiscard]] std::int64_t seed(ParallelMode mode) const { return seed(mode_name(mode)); }
  /// Seconds this rank spent creating the kind's communicators: the MPI one, plus the
  /// device one with the NCCL backend (device_creation_seconds). Also for a kind of
  /// which this rank is no member (the time it spent in the collective).
  [[nodiscard]] double creation_seconds(std::string_view kind) const;
  [[nodiscard]] double creation_seconds(const KindHandle& kind) const;
  [[nodiscard]] double creation_seconds(ParallelMode mode) const { return creation_seconds(mode_name(mode)); }
  /// Seconds of creation_seconds spent on the kind's NCCL communicator: one
  /// ncclCommSplit, or for `global` binding the device and creating the NCCL world.
  /// 0 with the MPI backend.
  [[nodiscard]] double device_creation_seconds(std::string_view kind) const;
  [[nodiscard]] double device_creation_seconds(const KindHandle& kind) const;
  [[nodiscard]] double device_creation_seconds(ParallelMode mode) const {
    return device_creation_seconds(mode_name(mode));
  }

  /// Collective over the world, NCCL backend only: every NCCL communicator this rank
  /// holds all-reduces its global rank (ncclAllReduce, in creation order; "global", the
  /// NCCL world, first, then each kind of which it is a member), and each sum is compared
  /// with the layout's. One entry per communicator; a wrong sum is reported, not thrown.
  /// Throws StateError naming the backend with the MPI backend or after destroy();
  /// BackendError or TimeoutError (after options().timeout) when NCCL fails, which
  /// aborts that communicator.
  [[nodiscard]] std::vector<GroupCheck> check_device_groups();

  /// Whether this rank is in the first / last pipeline stage: its coordinate on the
  /// pipeline dimension (`pipe` for a preset, `pp` for a mesh) is 0 / the last. Without
  /// a pipeline (size 1) every rank is both. With a virtual pipeline size set and
  /// `ignore_virtual` false (the default, as Megatron-LM's is_pipeline_first_stage /
  /// is_pipeline_last_stage), it must also hold the first / last virtual chunk (virtual
  /// rank 0 / size - 1), as in interleaved schedules; pass true to ask about the physical
  /// stage only. Throws StateError after destroy().
  [[nodiscard]] bool is_pipeline_first_stage(bool ignore_virtual = false) const;
  [[nodiscard]] bool is_pipeline_last_stage(bool ignore_virtual = false) const;
  /// Interleaved-pipeline state, per rank (no communication), by VirtualPipeline's rules
  /// (pgroups/layout/virtual_pipeline.hpp): the size positive or absent, the rank
  /// non-negative and below the size; a size below the rank held resets the rank to 0.
  void set_virtual_pipeline_parallel_size(std::optional<std::int64_t> size);
  void set_virtual_pipeline_parallel_rank(std::int64_t rank);
  [[nodiscard]] std::optional<std::int64_t> virtual_pipeline_parallel_size() const noexcept {
    return state_.virtual_pipeline.size();
  }
  [[nodiscard]] std::int64_t virtual_pipeline_parallel_rank() const noexcept { return state_.virtual_pipeline.rank(); }

  /// Processes of the world on this node (MPI_COMM_TYPE_SHARED), and this one's index
  /// among them. Valid after destroy().
  [[nodiscard]] std::int64_t processes_on_node() const noexcept { return state_.processes_on_node; }
  [[nodiscard]] std::int64_t local_rank_on_node() const noexcept { return state_.local_rank_on_node; }
  /// This rank's device ordinal. Valid after destroy().
  ///  - With the NCCL backend, the device the constructor bound (cudaSetDevice) and
  ///    created every NCCL communicator on: options.device when given (ConfigError at
  ///    construction if it is not visible), otherwise local_rank_on_node() modulo the
  ///    number of visible devices (nccl::choose_device; the launchers' LOCAL_RANK-style
  ///    variables are not consulted, the MPI shared-memory split counts the processes
  ///    actually on the node). devices_per_node is not used.
  ///  - With the MPI backend nothing is bound, and the value is docs/reference/spec.md §6's advice:
  ///    options.device when given, otherwise global_rank % devices_per_node
  ///    (processes_on_node() when that option is 0).
  /// The two rules agree when every node runs as many consecutive ranks as it has
  /// devices (block placement, one process per GPU), Colossal-AI's setting; the NCCL
  /// rule also holds for round-robin placement and nodes of different sizes.
  [[nodiscard]] std::int64_t device() const noexcept;

  /// What this context cost this rank in communicators (communicator_bill(layout(),
  /// global_rank(), options().share_communicators)); created counts the MPI ones, and
  /// with the NCCL backend as many NCCL ones were created. Valid after destroy().
  [[nodiscard]] CommunicatorBill communicator_bill() const;
  /// This rank's view of the layout (pgroups/layout/rank_view.hpp), valid while the context
  /// lives; the per-rank queries below answer through it. StateError once destroyed.
  [[nodiscard]] RankView view() const;

  /// Frees every communicator, in reverse creation order: the NCCL ones first (finalized
  /// and destroyed, aborted on failure), then the MPI ones. Afterwards is_initialized is
  /// false for every mode; a second call does nothing. Every handle is freed even if
  /// one fails; the first failure is then thrown (BackendError, or TimeoutError from an
  /// NCCL finalize). Precondition: all ranks destroy together (MPI_Comm_free is
  /// collective, ncclCommDestroy within a node).
  void destroy();

 private:
  // The seed's initializers (process_group_initializer.hpp) build their groups through
  // this same construction, restricted to their kinds, and take the communicators over.
  friend class ProcessGroupInitializer;
  ParallelContext(const ParallelConfig& config, MpiComm world, ContextOptions options,
                  const detail::CreationRequest& request);
  // The one construction path of every constructor, over the MPI communicator's transport
  // or the bootstrap's (src/context/transport.hpp).
  void build(const ParallelConfig& config, detail::Transport& transport, const detail::CreationRequest& request);

  // What a query about one kind resolves to: the kind's communicators, or none for the
  // pipeline of a job without one (answered as a group of this rank alone).
  struct Resolved {
    std::string_view name;
    const detail::KindGroup* group = nullptr;  // null: the trivial pipeline
    std::size_t kind = 0;
  };
  // Everything a context holds, moved member-wise. `live` (the communicators) is null
  // once destroyed or moved from; the rest stays readable after destroy().
  struct State {
    std::optional<Layout> layout;
    ContextOptions options;
    std::int64_t global_rank = 0;
    std::int64_t processes_on_node = 1;
    std::int64_t local_rank_on_node = 0;
    // The CUDA device the NCCL backend bound; empty with the MPI backend.
    std::optional<std::int64_t> bound_device;
    VirtualPipeline virtual_pipeline;
    std::unique_ptr<detail::LiveGroups> live;
  };

  /// The kind's entry, for a member of it; StateError otherwise (see the queries).
  [[nodiscard]] Resolved resolve(const KindHandle& kind) const;
  /// The handle's kind index, checked to be this live context's; StateError otherwise.
  [[nodiscard]] std::size_t checked_index(const KindHandle& kind) const;
  [[nodiscard]] bool destroyed() const noexcept { return !state_.live; }
  [[nodiscard]] std::int64_t pipeline_stage() const;

  State state_;
};

/// The text every rank must agree on before creation: the configuration (world size
/// resolved), where the node query's answer comes from ("launcher" environment or a
/// "shared_memory_split" collective: ranks that disagreed would wait in it forever), the
/// backend and the creation strategy, e.g. "world_size=8 pipeline=2 tensor=4 mode=2d
/// depth=- legacy_sequence_dp=false seed=1024 mesh=- node_info=launcher backend=mpi
/// strategy=create_group"; with a mesh, "mesh=tp=2,dp=2,pp=2 groups=tp,tp-dp" (order,
/// sizes and group tokens as given); then " settings=<options.agreed_settings>" when those are
/// not empty. Per-rank options (the device, the timeout) are not part of it.
[[nodiscard]] std::string agreement_text(const ParallelConfig& config, const ContextOptions& options,
                                         std::string_view node_info_source = "shared_memory_split");

/// What the ranks compare: every field of agreement_text as its own field of
/// encode_settings (pgroups/layout/agreement_record.hpp; the mesh's dimensions and group tokens
/// one by one), then agreement_text itself, shown in a MismatchError.
[[nodiscard]] std::string agreement_record(const ParallelConfig& config, const ContextOptions& options,
                                           std::string_view node_info_source = "shared_memory_split");

}  // namespace pgroups
