#pragma once
// How one construction of a ParallelContext reaches the other ranks, internal to
// pgroups::context. The construction is one skeleton (ParallelContext::build: validate,
// agree, node, device, the kinds, NCCL); what differs between the two transports is here.
// Over an MPI communicator (mpi_transport.cpp) the world is duplicated, the ranks agree
// by one reduction of a digest, the node comes from the launcher or a shared-memory split,
// each kind gets an MPI communicator by the chosen strategy, and, since MPI cannot cancel
// a blocking collective, a watchdog guards every step after the agreement. Over a
// bootstrap (bootstrap_transport.cpp) the ranks agree by one all-gather of their records,
// the node is the bootstrap's, gloo contexts connect in one step, and no watchdog is
// needed: every wait of a bootstrap, gloo and NCCL's polling is bounded.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device_groups.hpp"
#include "live_groups.hpp"
#include "pgroups/context/backend.hpp"
#include "pgroups/context/context_options.hpp"
#include "pgroups/context/creation_steps.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups::detail {

/// What a transport's guard of a blocking step holds while the step runs (MPI's watchdog
/// guard); destroyed when the step ends, on success or failure.
class StepGuard {
 public:
  StepGuard() = default;
  StepGuard(const StepGuard&) = delete;
  StepGuard& operator=(const StepGuard&) = delete;
  virtual ~StepGuard() = default;
};

/// The node as a transport counts it.
struct NodeCount {
  std::int64_t processes = 1;
  std::int64_t local_rank = 0;
};

class Transport {
 public:
  Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  virtual ~Transport() = default;

  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// What the world is called where its size does not match: "communicator", "bootstrap".
  [[nodiscard]] virtual std::string_view world_name() const = 0;
  /// Where the node's answer comes from, agreed with the configuration (ranks that
  /// disagreed on a collective node query would wait in it forever).
  [[nodiscard]] virtual std::string node_source() const = 0;
  /// The construction's steps for `layout` with `backend`. ConfigError for a backend this
  /// transport does not build (MPI's over a bootstrap, gloo's over an MPI communicator).
  [[nodiscard]] virtual std::vector<CreationStep> steps(const Layout& layout, Backend backend) const = 0;

  /// Starts the construction with the timeout in effect (zero: none), from now. Before any
  /// collective.
  virtual void start(std::chrono::milliseconds timeout) = 0;
  /// The steps every rank runs whatever its plan, before the agreement: the duplicate of
  /// the world over MPI (announced to `options` as its step), nothing over a bootstrap.
  virtual void before_agreement(const ContextOptions& options) = 0;
  /// Returns when every rank passed the same `record`; otherwise every rank throws the
  /// same error (judge_records: MismatchError, or the error a record carries).
  virtual void agree(const std::string& record) = 0;
  /// The guard of a step after the agreement; null where no step can block unbounded.
  [[nodiscard]] virtual std::unique_ptr<StepGuard> guard(const CreationStep& step) = 0;
  /// The node step.
  [[nodiscard]] virtual NodeCount node() = 0;
  /// How the ranks agree on a local step's outcome (the device step).
  [[nodiscard]] virtual AgreeOnSuccess outcome() = 0;
  /// Gives the whole-world kinds of `created` what they hold before any kind step.
  virtual void prepare(std::vector<KindGroup>& created, const Layout& layout) = 0;
  /// A step that makes kinds' groups: one kind's MPI communicator (StepKind::group) or
  /// every kind's gloo context (StepKind::gloo).
  virtual void create(const CreationStep& step, const Layout& layout, std::vector<KindGroup>& created, LiveGroups& live,
                      const ContextOptions& options) = 0;
  /// The NCCL step: the NCCL world's unique id, and one group's (the per-group fallback of
  /// an NCCL without ncclCommSplit), sent over this transport.
  [[nodiscard]] virtual WorldBroadcast world_broadcast() = 0;
  [[nodiscard]] virtual KindBroadcast kind_broadcast(const std::vector<KindGroup>& created) = 0;
  /// After the last step: what `live` keeps of the transport (MPI's duplicate world), the
  /// communicators named.
  virtual void finish(const Layout& layout, const std::vector<KindGroup>& created, LiveGroups& live) = 0;
};

/// The guard of a context's teardown, held while its communicators are freed: MPI's
/// watchdog with `timeout` (MPI_Comm_free may wait for the other ranks; unlimited when MPI
/// is not running), which names this rank (`rank` of `size`); null in a build without MPI,
/// or where no guard can be had (freeing then goes on unguarded). Never throws.
[[nodiscard]] std::unique_ptr<StepGuard> teardown_guard(std::chrono::milliseconds timeout, int rank, int size) noexcept;

/// The transport over `world` (borrowed), for ParallelContext(config, MPI_Comm). StateError
/// when MPI is not running; ConfigError in a build without MPI.
[[nodiscard]] std::unique_ptr<Transport> mpi_transport(MpiComm world);

/// The transport over `bootstrap`, which must outlive it.
[[nodiscard]] std::unique_ptr<Transport> bootstrap_transport(Bootstrap& bootstrap);

}  // namespace pgroups::detail
