// `pgroups verify`: builds every communicator of a configuration under MPI, then checks
// each one from the outside (MPI_Comm_size, MPI_Comm_rank and an MPI_Allgather of the
// members' global ranks) against the layout. With `--backend nccl` it also builds the
// NCCL communicators, and checks each with an ncclAllReduce of the members' global ranks
// (verify_device.hpp). Rank 0 reports; every rank exits 0 only if every check passed on
// every rank.
//
// No rank may be left waiting: each step whose failure can differ between ranks is
// followed by an agreement on the outcome, the context's own errors (ConfigError,
// MismatchError) are thrown on every rank alike, and a failure that can leave other
// ranks inside a collective (an MPI error) ends the job with MPI_Abort. Every flag that
// changes which collectives run (--format; the configuration, --strategy and --backend)
// is agreed on by the context's one agreement, so ranks launched with different flags
// end with a MismatchError (status 7) on every rank; --timeout and the --inject-* flags
// are per rank and change no collective. Every wait after creation is watched
// (WatchedPhase): a rank that never arrives ends the others with status 8.

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mpi_job.hpp"
#include "mpi_options.hpp"
#include "node_report.hpp"
#include "output.hpp"
#include "pgroups/common/environment.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/mpi/check.hpp"
#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/session.hpp"
#include "pgroups/report/verify_report.hpp"
#include "plan_options.hpp"
#include "print_warnings.hpp"
#include "subcommand.hpp"
#include "verify_checks.hpp"
#include "verify_device.hpp"
#include "verify_on_bootstrap.hpp"

namespace pgroups::cli {
namespace {

using mpi::check;

Observation observe(const ParallelContext& context, const KindHandle& handle) {
  if (!context.is_member(handle)) return Observation{.rank = -1, .size = 0, .members = {}, .ok = true};
  const MPI_Comm comm = context.get_cpu_group(handle).mpi();
  Observation seen;
  check(MPI_Comm_size(comm, &seen.size), "MPI_Comm_size");
  check(MPI_Comm_rank(comm, &seen.rank), "MPI_Comm_rank");
  seen.members.resize(static_cast<std::size_t>(seen.size));
  const int me = static_cast<int>(context.global_rank());
  check(MPI_Allgather(&me, 1, MPI_INT, seen.members.data(), 1, MPI_INT, comm), "MPI_Allgather");
  return judged(context, handle, std::move(seen));
}

// Rank 0's picture of one group kind, from every rank's observation (shown by the report
// layer, pgroups/report/verify_report.hpp).
using KindReport = report::VerifyKindReport;

KindReport gather_report(MPI_Comm world, int rank, int size, const ParallelContext& context, const KindHandle& handle,
                         const Observation& seen, bool with_groups) {
  KindReport report;
  report.kind = handle.name();
  const double seconds = context.creation_seconds(handle);
  check(MPI_Reduce(&seconds, &report.create_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, world), "MPI_Reduce");

  const std::array<int, 3> mine = {seen.rank, seen.size, seen.ok ? 1 : 0};
  std::vector<int> all(rank == 0 ? 3 * static_cast<std::size_t>(size) : 0);
  check(MPI_Gather(mine.data(), 3, MPI_INT, all.data(), 3, MPI_INT, 0, world), "MPI_Gather");
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      const std::size_t at = 3 * static_cast<std::size_t>(r);
      report.local_ranks.push_back(all[at]);
      report.sizes.push_back(all[at + 1]);
      report.ok = report.ok && all[at + 2] == 1;
    }
  }
  if (!with_groups) return report;

  std::vector<int> offsets;
  std::vector<int> members;
  if (rank == 0) {
    int total = 0;
    for (int s : report.sizes) {
      offsets.push_back(total);
      total += s;
    }
    members.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(seen.members.data(), seen.size, MPI_INT, members.data(), report.sizes.data(), offsets.data(),
                    MPI_INT, 0, world),
        "MPI_Gatherv");
  if (rank == 0) {
    std::vector<std::vector<int>> by_rank;
    for (std::size_t r = 0; r < report.sizes.size(); ++r) {
      const auto first = members.begin() + offsets[r];
      by_rank.emplace_back(first, first + report.sizes[r]);
    }
    report.groups = distinct_groups(by_rank);
  }
  return report;
}

// What step 1 of verify_job reads, locally, before any collective.
struct PreparedJob {
  ParallelConfig config;
  CreationStrategy strategy;
};

// Step 1, local: the configuration, and the options into `context_options`.
PreparedJob prepare_job(const VerifyOptions& options, ContextOptions& context_options, int rank, int size) {
  PreparedJob job{options.plan.resolve(size), parse_creation_strategy(options.strategy)};
  if (const std::string warning = strategy_deprecation(options.strategy); !warning.empty() && rank == 0) {
    fmt::print(stderr, "pgroups: warning: {}\n", warning);
  }
  // Checked here, where every rank settles its outcome, so that a rank without a GPU
  // ends the job with a clean status rather than through the constructor's MPI_Abort.
  const Backend backend = parse_backend(options.backend);
  require_backend_usable(backend);
  context_options.strategy = job.strategy;
  context_options.backend = backend;
  context_options.agreed_settings = agreed_settings(options);
  // Agreed on by the context itself (agreement_text), as it decides the collectives.
  context_options.share_communicators = !options.no_share;
  options.mpi.apply(context_options, job.config, rank, size);
  return job;
}

int verify_job(const VerifyOptions& options, ContextOptions& context_options, int rank, int size) {
  const MPI_Comm world = MPI_COMM_WORLD;
  const mpi::Communicator world_comm = mpi::Communicator::borrow(world);

  std::optional<PreparedJob> job;
  std::optional<LocalFailure> failure;
  try {
    job = prepare_job(options, context_options, rank, size);
  } catch (const std::exception& error) {
    failure = LocalFailure{exit_status_of(error), error.what()};
  }
  if (auto status = settle(world, rank, failure, options.mpi.in_effect)) return *status;

  // Step 2, collective: create. The constructor agrees on the configuration and on
  // agreed_settings first.
  std::optional<ParallelContext> context;
  double local_create_seconds = 0.0;
  try {
    // Every rank waits here for the others, but not forever: a rank that never arrives
    // fails the job with TimeoutError.
    mpi::barrier_until(world_comm, mpi::Deadline(*context_options.timeout), {"start", "the start of group creation"});
    const double start = MPI_Wtime();
    context.emplace(job->config, world, context_options);
    local_create_seconds = MPI_Wtime() - start;
  } catch (const std::exception& error) {
    return end_collective_step(world, rank, error);
  }

  // Step 3, collective: check each communicator, gather the picture on rank 0. Blocking
  // collectives, watched: a rank that never arrives ends the others with status 8.
  const bool json = options.format == "json";
  int ok_everywhere = 0;
  std::optional<IoError> output_error;
  try {
    const WatchedPhase phase(context_options, rank, size, {"check", "the checks of the communicators"});
    double create_seconds = 0.0;
    check(MPI_Allreduce(&local_create_seconds, &create_seconds, 1, MPI_DOUBLE, MPI_MAX, world), "MPI_Allreduce");
    std::vector<KindReport> reports;
    int all_ok = 1;
    for (const KindHandle& handle : context->kinds()) {
      const Observation seen = observe(*context, handle);
      all_ok = (all_ok == 1 && seen.ok) ? 1 : 0;
      reports.push_back(gather_report(world, rank, size, *context, handle, seen, json));
    }
    std::vector<DeviceKindReport> device;
    if (context->backend() == Backend::nccl) {
      DeviceCheck checked = check_device_groups(world, rank, size, *context);
      all_ok = (all_ok == 1 && checked.ok_here) ? 1 : 0;
      device = std::move(checked.reports);
    }
    check(MPI_Allreduce(&all_ok, &ok_everywhere, 1, MPI_INT, MPI_MIN, world), "MPI_Allreduce");
    const LiveNodes nodes = gather_live_nodes(world);  // the job's nodes (node_report.hpp)
    if (rank == 0) {
      const report::VerifyRun run{.layout = context->layout(),
                                  .strategy = strategy_name(job->strategy),
                                  .backend = backend_name(context->backend()),
                                  .share_communicators = context->options().share_communicators,
                                  .create_seconds = create_seconds,
                                  .bill = context->communicator_bill(),
                                  .kinds = std::move(reports),
                                  .device = std::move(device),
                                  .ok = ok_everywhere == 1};
      // A failed write (full disk, closed pipe) fails rank 0 alone, after the collective
      // destruction, so that no rank is left waiting.
      output_error = write_verify_report(run, nodes, json);
    }
  } catch (const std::exception& error) {
    return end_collective_step(world, rank, error);
  }

  // Step 4, collective: free the communicators (destroy() watches itself).
  try {
    if (context_options.before_step) context_options.before_step("destroy");
    context->destroy();
  } catch (const std::exception& error) {
    return end_collective_step(world, rank, error);
  }
  if (output_error) {
    print_job_error(rank, true, output_error->what());
    return static_cast<int>(output_error->exit_code());
  }
  return ok_everywhere == 1 ? 0 : static_cast<int>(ExitCode::verify_failed);
}

int run_verify(const VerifyOptions& options) {
  // gloo runs on any bootstrap, NCCL on any with gloo's CPU groups beside it; MPI on MPI's alone.
  if (options.backend == "gloo") return run_verify_on_bootstrap(options);
  const BootstrapKind requested = parse_bootstrap(options.bootstrap);
  if (options.backend == "nccl" && requested != BootstrapKind::mpi &&
      choose_bootstrap(requested, process_environment) != BootstrapKind::mpi) {
    require_backend_built(Backend::gloo);  // its CPU groups, which verify checks
    return run_verify_on_bootstrap(options);
  }
  if (requested != BootstrapKind::automatic && requested != BootstrapKind::mpi) {
    throw ConfigError(
        fmt::format("--backend {} needs the MPI bootstrap, not --bootstrap {}: use --backend gloo or "
                    "nccl, which run on every bootstrap, or --bootstrap mpi under an MPI launcher",
                    options.backend, options.bootstrap));
  }
  const std::unique_ptr<mpi::Session> session = mpi::start_session(options.mpi.in_effect);
  const int rank = session->world().rank();
  const int size = session->world().size();
  ContextOptions context_options;
  context_options.timeout = options.mpi.in_effect;
  const int status = verify_job(options, context_options, rank, size);
  finish_job(*session, context_options, rank, size);
  return status;
}

}  // namespace

Subcommand add_verify_command(CLI::App& parent) {
  auto options = std::make_shared<VerifyOptions>();
  CLI::App* app = parent.add_subcommand(
      "verify", "Create every communicator (under mpirun, srun or torchrun) and check each against the layout");
  options->plan.add_to(*app, /*with_world_size=*/false);
  app->add_option("--strategy", options->strategy,
                  "How communicators are created, named by the MPI call: create_group (the default, "
                  "MPI_Comm_create_group), comm_split (MPI_Comm_split), comm_create (MPI_Comm_create) or "
                  "per_group (Colossal-AI's algorithm); split is a deprecated alias of create_group");
  app->add_option("--backend", options->backend,
                  "Communicators to check: mpi, nccl (the MPI ones and an NCCL one per kind; needs a GPU per "
                  "rank), or gloo (CPU groups with no MPI, on any --bootstrap)")
      ->check(CLI::IsMember({"mpi", "nccl", "gloo"}));
  app->add_option("--bootstrap", options->bootstrap,
                  "How the ranks find each other: auto (the launcher's: torchrun's variables, else MPI, else PMIx), "
                  "mpi, pmix (srun --mpi=pmix, mpirun; no MPI_Init) or env (RANK, WORLD_SIZE, MASTER_ADDR, "
                  "MASTER_PORT: torchrun, Kubernetes, by hand); --backend mpi needs mpi")
      ->check(CLI::IsMember(bootstrap_names()));
  app->add_option("--format", options->format, "Output format; the same on every rank (agreed: status 7 otherwise)")
      ->check(CLI::IsMember({"text", "json"}));
  app->add_flag("--no-share", options->no_share,
                "One communicator per kind, none shared (the same on every rank: agreed, status 7 otherwise)");
  options->mpi.add_to(*app, {"check", "destroy", "finalize"});
  return {app,
          [options] {
            options->mpi.resolve();
            return run_verify(*options);
          },
          [] { return true; }};
}

}  // namespace pgroups::cli
