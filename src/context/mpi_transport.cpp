// The MPI transport of a context's construction (transport.hpp): everything the one
// construction path needs of an MPI communicator.

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/agreement_record.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/node.hpp"
#include "pgroups/mpi/outcome.hpp"
#include "pgroups/mpi/session.hpp"
#include "pgroups/mpi/strategy.hpp"
#include "transport.hpp"
#include "watchdog.hpp"

namespace pgroups::detail {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

class WatchdogGuard final : public StepGuard {
 public:
  WatchdogGuard(Watchdog& watchdog, const mpi::Step& step) : guard_(watchdog.enter(step)) {}

 private:
  Watchdog::Guard guard_;
};

// MPI_Comm_set_name is local: each communicator carries the names of the kinds it serves,
// so that MPI's diagnostics (and tools reading the names) say which kinds they are.
void name_communicators(const Layout& layout, const mpi::Communicator& world, const std::vector<KindGroup>& created) {
  const auto kinds = layout.group_kinds();
  std::vector<std::string> names(kinds.size());
  std::string world_name;
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    const KindGroup& entry = created[kind];
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

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm world)
      : borrowed_(mpi::Communicator::borrow(world)), rank_(borrowed_.rank()), size_(borrowed_.size()) {}

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] std::string_view world_name() const override { return "communicator"; }
  [[nodiscard]] std::string node_source() const override { return launcher_node_ ? "launcher" : "shared_memory_split"; }

  [[nodiscard]] std::vector<CreationStep> steps(const Layout& layout, Backend backend) const override {
    if (backend == Backend::gloo) {
      throw ConfigError(
          "backend gloo is built over a bootstrap: use ParallelContext(config, bootstrap, options), with an "
          "mpi::MpiBootstrap of the communicator to run it under MPI");
    }
    return creation_steps(layout, backend == Backend::nccl);
  }

  void start(std::chrono::milliseconds timeout) override {
    deadline_ = mpi::Deadline(timeout);
    // Where the node query's answer comes from is agreed on with the configuration: the
    // query is a collective, and ranks that disagreed on taking it would wait forever.
    launcher_node_ = mpi::node_info_from_launcher(borrowed_);
  }

  // The duplicate waits without blocking (MPI_Comm_idup), so a rank that never arrives
  // makes the others throw TimeoutError here, as in the agreement after it.
  void before_agreement(const ContextOptions& options) override {
    const CreationStep step = creation_step(StepKind::duplicate);
    if (options.before_step) options.before_step(step.name);
    const auto start = Clock::now();
    control_ = mpi::dup_until(borrowed_, deadline_, {step.name, step.description});
    dup_seconds_ = seconds_since(start);
  }

  void agree(const std::string& record) override {
    mpi::require_identical(control_, record, "configuration", deadline_);
    // Every rank carried the same error, so the records agreed: each throws it.
    if (is_error_record(record))
      judge_records(std::vector<std::string>(static_cast<std::size_t>(size_), record), "configuration");
  }

  // Every later step blocks inside MPI, which can neither time out nor be cancelled: a
  // watchdog ends the process if one of them is still running at the deadline.
  [[nodiscard]] std::unique_ptr<StepGuard> guard(const CreationStep& step) override {
    if (!watchdog_) watchdog_.emplace(deadline_, rank_, size_);
    return std::make_unique<WatchdogGuard>(*watchdog_, mpi::Step{step.name, step.description});
  }

  [[nodiscard]] NodeCount node() override {
    const mpi::NodeInfo node = launcher_node_ ? *launcher_node_ : mpi::node_info(control_);
    return {node.processes, node.local_rank};
  }

  [[nodiscard]] AgreeOnSuccess outcome() override {
    return [this](const std::exception_ptr& local, std::string_view what) {
      mpi::require_success_everywhere(control_, local, what);
    };
  }

  // A kind that is the whole world (`global` among them) has the duplicate as its
  // communicator already.
  void prepare(std::vector<KindGroup>& created, const Layout& layout) override {
    for (std::size_t kind = 0; kind < created.size(); ++kind) {
      if (created[kind].sharing.source != CommSource::world) continue;
      created[kind].comm = mpi::Communicator::borrow(control_.get());
      if (kind == layout.world_kind()) created[kind].creation_seconds = dup_seconds_;
    }
  }

  // The group step of one kind: its own communicator (a collective), its owner's, or the
  // one communicator of this rank alone that every one-rank kind uses (made for the first
  // such kind created, borrowed by the others).
  void create(const CreationStep& step, const Layout& layout, std::vector<KindGroup>& created, LiveGroups& /*live*/,
              const ContextOptions& options) override {
    const std::size_t kind = *step.group_kind;
    const auto start = Clock::now();
    KindGroup& entry = created[kind];
    switch (entry.sharing.source) {
      case CommSource::own:
        entry.comm = mpi::create_group_communicator(control_, layout, kind, options.strategy);
        break;
      case CommSource::shared:  // the owner comes first in creation order
        entry.comm = mpi::Communicator::borrow(created[entry.sharing.owner].comm.get());
        break;
      case CommSource::singleton:  // local: a collective over this rank alone
        if (!entry.member) break;
        if (self_holder_) {
          entry.comm = mpi::Communicator::borrow(created[*self_holder_].comm.get());
          entry.sharing.owner = *self_holder_;
        } else {
          entry.comm = mpi::Communicator::borrow(MPI_COMM_SELF).dup();
          self_holder_ = kind;
        }
        break;
      case CommSource::world: break;  // the duplicate, made before
    }
    entry.creation_seconds = seconds_since(start);
  }

  // The unique ids over MPI: the world's over the duplicate, a group's (the per-group
  // fallback) over the kind's communicator, whose rank 0 is the group's local rank 0.
  [[nodiscard]] WorldBroadcast world_broadcast() override {
    return
        [this](std::span<std::byte> bytes) { mpi::broadcast_from_rank0(control_.get(), bytes, "the NCCL unique id"); };
  }
  [[nodiscard]] KindBroadcast kind_broadcast(const std::vector<KindGroup>& created) override {
    return [&created](std::size_t kind, std::span<std::byte> bytes) {
      mpi::broadcast_from_rank0(created[kind].comm.get(), bytes, "a group's NCCL unique id");
    };
  }

  void finish(const Layout& layout, const std::vector<KindGroup>& created, LiveGroups& live) override {
    name_communicators(layout, control_, created);
    live.world = std::move(control_);
  }

 private:
  mpi::Communicator borrowed_;
  int rank_;
  int size_;
  mpi::Deadline deadline_;
  std::optional<mpi::NodeInfo> launcher_node_;
  mpi::Communicator control_;  // the duplicate: the world's group and every kind's parent
  double dup_seconds_ = 0.0;
  std::optional<std::size_t> self_holder_;
  std::optional<Watchdog> watchdog_;
};

class TeardownGuard final : public StepGuard {
 public:
  TeardownGuard(const mpi::Deadline& deadline, int rank, int size)
      : watchdog_(deadline, rank, size), guard_(watchdog_.enter_if_possible(kDestroyStep)) {}

 private:
  static constexpr mpi::Step kDestroyStep{"destroy", "the destruction of the context"};
  Watchdog watchdog_;
  Watchdog::Guard guard_;
};

}  // namespace

std::unique_ptr<StepGuard> teardown_guard(std::chrono::milliseconds timeout, int rank, int size) noexcept {
  try {
    return std::make_unique<TeardownGuard>(mpi::is_running() ? mpi::Deadline(timeout) : mpi::Deadline(), rank, size);
  } catch (...) {
    return nullptr;
  }
}

std::unique_ptr<Transport> mpi_transport(MpiComm world) {
  mpi::require_running("a ParallelContext cannot be built");
  return std::make_unique<MpiTransport>(world);
}

}  // namespace pgroups::detail
