// A job under MPI (job.hpp's JobTransport over MPI_COMM_WORLD, mpi_job_transport): the
// one place in cli/ with raw MPI. MPI cannot cancel a blocking collective, so every wait
// has a watchdog (WatchedPhase), a rank's own failure inside a collective step ends the
// job (MPI_Abort), and the settle of a local step that times out does too.

#include <fmt/format.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "job.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/context_options.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/mpi/check.hpp"
#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/session.hpp"
#include "pgroups/mpi/watchdog.hpp"

namespace pgroups::cli {
namespace {

using mpi::check;

// The step before which the phase's fault, if any, strikes; then the phase's deadline, of
// the timeout the command resolved.
mpi::Deadline announce(const ContextOptions& options, const mpi::Step& step) {
  if (options.before_step) options.before_step(step.name);
  if (!options.timeout) throw StateError(fmt::format("the phase '{}' has no timeout resolved", step.name));
  return mpi::Deadline(*options.timeout);
}

// A phase of a job in which the ranks wait for each other (the checks, the gathering of
// results, each measurement, MPI_Finalize). On construction it runs the fault-injection
// hook for `step` (options.before_step, as the context does for its own steps), then arms
// a watchdog with options.timeout, which the command has resolved (MpiOptions::in_effect;
// zero: none; StateError when it has not), counted from there: when this rank is still
// blocked in the phase at the deadline, it prints the timeout message naming `step` and
// ends the process with ExitCode::timeout. Disarmed on destruction.
class WatchedPhase {
 public:
  WatchedPhase(const ContextOptions& options, int rank, int size, const mpi::Step& step)
      : watchdog_(announce(options, step), rank, size), guard_(watchdog_.enter(step)) {}

  WatchedPhase(const WatchedPhase&) = delete;
  WatchedPhase& operator=(const WatchedPhase&) = delete;

 private:
  mpi::Watchdog watchdog_;
  mpi::Watchdog::Guard guard_;
};

class MpiJob final : public JobTransport {
 public:
  explicit MpiJob(std::chrono::milliseconds timeout)
      : session_(mpi::start_session(timeout)),
        timeout_(timeout),
        rank_(session_->world().rank()),
        size_(session_->world().size()) {}

  // A job that ended before its last step (every rank returned alike) still finalizes
  // under a watchdog.
  ~MpiJob() override {
    if (finished_) return;
    try {
      ContextOptions options;
      options.timeout = timeout_;
      finish(options);
    } catch (...) {  // NOLINT(bugprone-empty-catch): the job's status is already decided
    }
  }

  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] std::string_view name() const override { return bootstrap_name(BootstrapKind::mpi); }
  [[nodiscard]] bool creates_mpi_groups() const override { return true; }

  // One reduction of the smallest and largest status, which waits at most the timeout.
  std::optional<int> settle(const std::optional<LocalFailure>& failure) override {
    const std::int64_t status = failure ? failure->code : 0;
    const std::array<std::int64_t, 2> local = {status, -status};
    std::vector<std::int64_t> reduced;
    try {
      reduced = mpi::min_until(mpi::Communicator::borrow(MPI_COMM_WORLD), local, mpi::Deadline(timeout_),
                               {"settle", "the agreement on every rank's set-up"});
    } catch (const TimeoutError& error) {
      // The reduction stays pending (MPI cannot cancel it), so MPI_Finalize could hang.
      print_job_error(rank_, false, error.what());
      mpi::abort_job(MPI_COMM_WORLD, static_cast<int>(ExitCode::timeout));
    }
    const auto best = static_cast<int>(reduced[0]);
    const auto worst = static_cast<int>(-reduced[1]);
    if (worst == 0) return std::nullopt;
    if (failure) print_job_error(rank_, best == worst, failure->message);
    return worst;
  }

  int end_step(const std::exception& error) override {
    if (dynamic_cast<const ConfigError*>(&error) != nullptr || dynamic_cast<const MismatchError*>(&error) != nullptr) {
      print_job_error(rank_, true, error.what());
      return exit_status_of(error);
    }
    print_job_error(rank_, false, error.what());
    mpi::abort_job(MPI_COMM_WORLD, exit_status_of(error));
  }

  std::shared_ptr<void> enter(const ContextOptions& options, const JobStep& step) override {
    return std::make_shared<WatchedPhase>(options, rank_, size_, mpi::Step{step.name, step.description});
  }

  // Every rank waits for the others at the start, but not forever: a rank that never
  // arrives fails the job with TimeoutError. The constructor agrees on the configuration
  // and the settings first.
  CreatedContext create(const ParallelConfig& config, const ContextOptions& options) override {
    mpi::barrier_until(mpi::Communicator::borrow(MPI_COMM_WORLD), mpi::Deadline(timeout_),
                       {"start", "the start of group creation"});
    const double start = MPI_Wtime();
    ParallelContext context(config, MPI_COMM_WORLD, options);
    return {std::move(context), MPI_Wtime() - start};
  }

  void barrier(const JobStep& step) override {
    mpi::barrier_until(mpi::Communicator::borrow(MPI_COMM_WORLD), mpi::Deadline(timeout_),
                       {step.name, step.description});
  }

  std::vector<std::string> all_gather(std::string_view bytes, std::string_view /*what*/) override {
    const int length = static_cast<int>(bytes.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    std::vector<int> offsets;
    int total = 0;
    for (const int each : lengths) {
      offsets.push_back(total);
      if (__builtin_add_overflow(total, each, &total)) {
        throw BackendError(fmt::format("the ranks' records sum to more than {} bytes, MPI's count", INT32_MAX));
      }
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Allgatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                         MPI_COMM_WORLD),
          "MPI_Allgatherv");
    std::vector<std::string> by_rank;
    for (std::size_t r = 0; r < lengths.size(); ++r) by_rank.push_back(all.substr(offsets[r], lengths[r]));
    return by_rank;
  }

  // The node is the shared-memory split, named by its first rank and the processor's name.
  NodePlace node() override {
    MPI_Comm node = MPI_COMM_NULL;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
    int node_rank = 0;
    int first = rank_;
    check(MPI_Comm_rank(node, &node_rank), "MPI_Comm_rank");
    check(MPI_Allreduce(&rank_, &first, 1, MPI_INT, MPI_MIN, node), "MPI_Allreduce");
    check(MPI_Comm_free(&node), "MPI_Comm_free");
    std::array<char, MPI_MAX_PROCESSOR_NAME> host{};
    int length = 0;
    check(MPI_Get_processor_name(host.data(), &length), "MPI_Get_processor_name");
    return {fmt::format("{}#{}", host.data(), first), host.data(), node_rank};
  }

  [[nodiscard]] std::string local_rank_source() const override { return "the shared-memory split"; }

  // A duplicate of the world per communicator (what the cheapest creation of each costs),
  // and as many one-integer all-reduces (a collective's round alone).
  std::vector<Floor> floors(std::int64_t communicators) override {
    const auto count = static_cast<std::size_t>(communicators);
    return {{"limit", fmt::format("{} x MPI_Comm_dup", communicators),
             [count] {
               std::vector<MPI_Comm> dups(count, MPI_COMM_NULL);
               const double start = MPI_Wtime();
               for (MPI_Comm& dup : dups) check(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup");
               const double elapsed = MPI_Wtime() - start;
               for (MPI_Comm& dup : dups) check(MPI_Comm_free(&dup), "MPI_Comm_free");
               return elapsed;
             }},
            {"allreduce", fmt::format("{} x MPI_Allreduce(1 int)", communicators), [count] {
               int in = 1;
               int out = 0;
               const double start = MPI_Wtime();
               for (std::size_t i = 0; i < count; ++i) {
                 check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
               }
               return MPI_Wtime() - start;
             }}};
  }

  // MPI_Finalize waits for the other ranks: watched.
  void finish(const ContextOptions& options) override {
    const WatchedPhase phase(options, rank_, size_, {"finalize", "MPI_Finalize, the end of the job"});
    finished_ = true;
    session_->finalize();
  }

 private:
  std::unique_ptr<mpi::Session> session_;
  std::chrono::milliseconds timeout_;
  int rank_;
  int size_;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<JobTransport> mpi_job_transport(std::chrono::milliseconds timeout) {
  return std::make_unique<MpiJob>(timeout);
}

}  // namespace pgroups::cli
