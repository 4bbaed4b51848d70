#pragma once
// The one skeleton of the commands that create groups (verify, bench), and what differs by
// transport. A job prepares locally, settles that step's outcome, creates the context,
// runs its collective steps, reports on rank 0 and finishes; no rank may be left waiting.
// A step whose failure can differ between ranks is followed by an agreement on its
// outcome; errors the context throws on every rank alike (ConfigError, MismatchError) make
// every rank return; every wait has a deadline.
//
// A JobTransport is how a job reaches the other ranks. On a bootstrap (launch's one door,
// start_bootstrap) every wait is bounded by the timeout, so a failure is returned and no
// step needs a guard. Under MPI (mpi_job.cpp, the one place in cli/ with raw MPI) a
// blocking collective cannot be cancelled: a watchdog guards each step, and a rank's own
// failure inside a collective step ends the job (MPI_Abort). Which transport a pair of
// backend and bootstrap runs on is one rule, job_transport().

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/context/context_options.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/layout/parallel_config.hpp"

namespace pgroups::cli {

/// A local step's failure: the exit status and the message.
struct LocalFailure {
  int code = 0;
  std::string message;
};

/// The documented exit status of an exception (ExitCode of a pgroups::Error, internal
/// otherwise).
[[nodiscard]] int exit_status_of(const std::exception& error);

/// Prints "pgroups: error: ..." once (rank 0) when every rank shares the message, or
/// tagged with the rank when it is this rank's own.
void print_job_error(int rank, bool shared_by_all, const std::string& message);

/// The status of a job that reached its end: `status`, unless rank 0's report failed to be
/// written (`output_error`, its alone, known after every rank left), which it then reports.
[[nodiscard]] int status_after_report(int rank, const std::optional<IoError>& output_error, int status);

/// A step of a job after creation at which the ranks wait for each other: the name that
/// --inject-step and the fault hook match, and the description messages use.
struct JobStep {
  std::string_view name;
  std::string_view description;
};

/// Where this rank runs, for the report of the job's nodes: the node's key (equal on the
/// ranks of one node, distinct between nodes), its host name, and this rank's index on it.
struct NodePlace {
  std::string key;
  std::string host;
  int local_rank = 0;
};

/// A context just created, and the seconds its creation took on this rank.
struct CreatedContext {
  ParallelContext context;
  double seconds = 0.0;
};

/// What a creation cannot go below on a transport, as `pgroups bench` times it beside the
/// creation: a name, the calls it makes, and a timing of them on this rank (seconds).
struct Floor {
  std::string name;
  std::string call;
  std::function<double()> time;
};

class JobTransport {
 public:
  JobTransport() = default;
  JobTransport(const JobTransport&) = delete;
  JobTransport& operator=(const JobTransport&) = delete;
  virtual ~JobTransport() = default;

  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// The bootstrap's name ("mpi", "env", ...), for the reports.
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// Whether the context is built over MPI communicators (Backend::mpi and nccl under MPI),
  /// so that --strategy applies; otherwise its CPU groups are gloo contexts.
  [[nodiscard]] virtual bool creates_mpi_groups() const = 0;

  /// Collective: every rank passes its own outcome of a local step. When any rank failed,
  /// each failed rank reports and all return the worst status; nothing when every rank
  /// succeeded. A rank missing past the timeout makes the others report the TimeoutError
  /// and return (or, under MPI, end the job with) ExitCode::timeout.
  [[nodiscard]] virtual std::optional<int> settle(const std::optional<LocalFailure>& failure) = 0;
  /// The end of a collective step that threw: ConfigError and MismatchError are thrown on
  /// every rank alike (rank 0 reports) and their status is returned; any other error is
  /// this rank's own, reported with its rank, and its status returned, or, under MPI, where
  /// other ranks may be waiting in a collective forever, the job ended.
  [[nodiscard]] virtual int end_step(const std::exception& error) = 0;
  /// Runs `options`' fault hook for `step`, then guards the step's waits until the
  /// returned guard is destroyed: under MPI a watchdog of the timeout that ends this rank
  /// with ExitCode::timeout, naming the step; nothing where every wait is bounded.
  [[nodiscard]] virtual std::shared_ptr<void> enter(const ContextOptions& options, const JobStep& step) = 0;
  /// Collective: the context of `config` with `options`.
  [[nodiscard]] virtual CreatedContext create(const ParallelConfig& config, const ContextOptions& options) = 0;
  /// Collective: returns when every rank entered; `step` names it in a timeout's message.
  virtual void barrier(const JobStep& step) = 0;
  /// Collective: every rank's `bytes`, by rank.
  [[nodiscard]] virtual std::vector<std::string> all_gather(std::string_view bytes, std::string_view what) = 0;
  /// Collective: this rank's node.
  [[nodiscard]] virtual NodePlace node() = 0;
  /// Where NodePlace::local_rank comes from, as the text report says it.
  [[nodiscard]] virtual std::string local_rank_source() const = 0;
  /// The floors of a creation of `communicators` communicators on this transport, each
  /// collective when timed.
  [[nodiscard]] virtual std::vector<Floor> floors(std::int64_t communicators) = 0;
  /// Collective, the last step of a job that reached it ("finalize"): the ranks leave
  /// together, so that none loses what serves the others (the store, MPI) first.
  virtual void finish(const ContextOptions& options) = 0;
};

/// The one rule of backend and bootstrap: `backend` ("mpi", "nccl", "gloo") on the bootstrap
/// named `bootstrap` ("auto", "mpi", "pmix", "env"), started with `timeout`. gloo runs on
/// every bootstrap; NCCL on MPI's with MPI communicators as its CPU groups, on any other
/// with gloo's (then gloo must be built); MPI's backend on MPI's bootstrap alone. The
/// start-up's errors are thrown on this rank, before any collective: ConfigError for a pair
/// that does not go together or a part this pgroups was built without.
[[nodiscard]] std::unique_ptr<JobTransport> job_transport(std::string_view backend, std::string_view bootstrap,
                                                          std::chrono::milliseconds timeout);

/// A job on `bootstrap`, started by the caller, whose waits take `timeout`.
[[nodiscard]] std::unique_ptr<JobTransport> bootstrap_job_transport(std::unique_ptr<Bootstrap> bootstrap,
                                                                    std::chrono::milliseconds timeout);

/// The MPI transport (mpi_job.cpp): MPI started under a watchdog, MPI_COMM_WORLD the
/// world. ConfigError in a build without MPI.
[[nodiscard]] std::unique_ptr<JobTransport> mpi_job_transport(std::chrono::milliseconds timeout);

}  // namespace pgroups::cli
