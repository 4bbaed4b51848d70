// `pgroups verify`: builds every communicator of a configuration, then checks each one
// from the outside (its size, this rank's rank in it and an all-gather of the members'
// global ranks, through the group's own communicator: GroupHandle) against the layout.
// With `--backend nccl` it also builds the NCCL communicators and checks each with an
// ncclAllReduce of the members' global ranks (ParallelContext::check_device_groups). Every
// rank's record (verify_record.hpp) reaches every rank, and rank 0 reports; every rank
// exits 0 only if every check passed on every rank.
//
// One job on any transport (job.hpp: MPI's, or a bootstrap's with gloo's CPU groups). No
// rank may be left waiting: each step whose failure can differ between ranks is followed
// by an agreement on the outcome, the context's own errors (ConfigError, MismatchError)
// are thrown on every rank alike, and every wait after creation is guarded or bounded: a
// rank that never arrives ends the others with status 8. Every flag that changes which
// collectives run (--format; the configuration, --strategy and --backend) is agreed on by
// the context's one agreement, so ranks launched with different flags end with a
// MismatchError (status 7) on every rank; --timeout and the --inject-* flags are per rank
// and change no collective.

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "job.hpp"
#include "mpi_options.hpp"
#include "output.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/launch/launcher.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/report/verify_report.hpp"
#include "plan_options.hpp"
#include "subcommand.hpp"
#include "verify_checks.hpp"
#include "verify_record.hpp"

namespace pgroups::cli {
namespace {

Observation observe(const ParallelContext& context, const KindHandle& handle) {
  if (!context.is_member(handle)) return Observation{.rank = -1, .size = 0, .members = {}, .ok = true};
  const GroupHandle group = context.get_cpu_group(handle);
  const std::vector<std::int64_t> members = group.all_gather(context.global_rank());
  Observation seen{
      .rank = group.rank(), .size = group.size(), .members = {members.begin(), members.end()}, .ok = false};
  return judged(context, handle, std::move(seen));
}

// With NCCL, every communicator all-reduces its members' global ranks (collective over the
// world); a rank whose sum differs says so.
std::vector<DeviceRecord> check_devices(ParallelContext& context) {
  std::vector<DeviceRecord> records;
  if (context.backend() != Backend::nccl) return records;
  const std::vector<GroupCheck> checks = context.check_device_groups();
  for (const KindHandle& handle : context.kinds()) {
    const auto held = std::find_if(checks.begin(), checks.end(),
                                   [&handle](const GroupCheck& check) { return check.kind == handle.name(); });
    const bool member = held != checks.end();
    if (member && !held->ok()) {
      fmt::print(stderr,
                 "pgroups verify: rank {}, group {}: ncclAllReduce of the global ranks gave {}; the layout's group "
                 "sums to {}\n",
                 context.global_rank(), handle.name(), held->actual, held->expected);
    }
    records.push_back(
        {member, member ? held->expected : 0, member ? held->actual : 0, context.device_creation_seconds(handle)});
  }
  return records;
}

// This rank's record; the members travel only where the report shows the groups (JSON).
RankRecord my_record(ParallelContext& context, JobTransport& transport, double create_seconds, bool with_groups) {
  RankRecord record;
  record.create_seconds = create_seconds;
  for (const KindHandle& handle : context.kinds()) {
    record.kinds.push_back(observe(context, handle));
    if (!with_groups) record.kinds.back().members.clear();
    record.kind_seconds.push_back(context.creation_seconds(handle));
  }
  record.device = check_devices(context);
  record.node = transport.node();
  const LauncherInfo launcher = detect_launcher();
  record.launcher_local_rank = launcher.local_rank ? *launcher.local_rank : -1;
  record.topology_address = launcher.topology_address.value_or(std::string());
  return record;
}

bool all_passed(const std::vector<RankRecord>& records) {
  return std::all_of(records.begin(), records.end(), [](const RankRecord& record) {
    return std::all_of(record.kinds.begin(), record.kinds.end(), [](const Observation& seen) { return seen.ok; }) &&
           std::all_of(record.device.begin(), record.device.end(),
                       [](const DeviceRecord& check) { return check.expected == check.actual; });
  });
}

// The job's nodes from every rank's record: a node is named by its first rank.
report::LiveNodes nodes_of(const std::vector<RankRecord>& records, const JobTransport& transport) {
  report::LiveNodes nodes;
  nodes.launcher = detect_launcher();
  nodes.local_rank_source = transport.local_rank_source();
  std::map<std::string, std::int64_t> first_rank;
  for (std::size_t r = 0; r < records.size(); ++r) {
    const auto [at, added] = first_rank.emplace(records[r].node.key, static_cast<std::int64_t>(r));
    if (added) nodes.hosts.push_back(records[r].node.host);
    nodes.node_of_rank.push_back(at->second);
    nodes.local_rank_on_node.push_back(records[r].node.local_rank);
    nodes.launcher_local_rank.push_back(records[r].launcher_local_rank);
    nodes.topology_address.push_back(records[r].topology_address);
  }
  return nodes;
}

// Rank 0's picture of every kind, from every rank's record.
std::vector<report::VerifyKindReport> kind_reports(const ParallelContext& context,
                                                   const std::vector<RankRecord>& records, bool with_groups) {
  std::vector<report::VerifyKindReport> reports;
  const std::vector<KindHandle> handles = context.kinds();
  for (std::size_t k = 0; k < handles.size(); ++k) {
    report::VerifyKindReport report;
    report.kind = handles[k].name();
    std::vector<std::vector<int>> members;
    for (const RankRecord& record : records) {
      const Observation& seen = record.kinds[k];
      report.local_ranks.push_back(seen.rank);
      report.sizes.push_back(seen.size);
      report.ok = report.ok && seen.ok;
      members.push_back(seen.members);
      report.create_seconds = std::max(report.create_seconds, record.kind_seconds[k]);
    }
    if (with_groups) report.groups = distinct_groups(members);
    reports.push_back(std::move(report));
  }
  return reports;
}

// Rank 0's picture of every kind's NCCL communicators (empty without NCCL).
std::vector<report::VerifyDeviceReport> device_reports(const ParallelContext& context,
                                                       const std::vector<RankRecord>& records) {
  std::vector<report::VerifyDeviceReport> reports;
  if (context.backend() != Backend::nccl) return reports;
  const std::vector<KindHandle> handles = context.kinds();
  for (std::size_t k = 0; k < handles.size(); ++k) {
    report::VerifyDeviceReport report;
    report.kind = handles[k].name();
    for (const RankRecord& record : records) {
      const DeviceRecord& check = record.device[k];
      report.create_seconds = std::max(report.create_seconds, check.create_seconds);
      if (!check.member) continue;  // no member of the kind
      report.expected.push_back(check.expected);
      report.actual.push_back(check.actual);
      report.ok = report.ok && check.expected == check.actual;
    }
    reports.push_back(std::move(report));
  }
  return reports;
}

// Rank 0's report; a failed write is its error alone, after every rank's checks.
std::optional<IoError> write_report(const ParallelContext& context, const VerifyOptions& options,
                                    const std::vector<RankRecord>& records, const JobTransport& transport) {
  const bool json = options.format == "json";
  double create_seconds = 0.0;
  for (const RankRecord& record : records) create_seconds = std::max(create_seconds, record.create_seconds);
  const report::VerifyRun run{
      .layout = context.layout(),
      .strategy = transport.creates_mpi_groups() ? strategy_name(context.options().strategy) : std::string_view("gloo"),
      .backend = backend_name(context.backend()),
      .share_communicators = context.options().share_communicators,
      .create_seconds = create_seconds,
      .bill = context.communicator_bill(),
      .kinds = kind_reports(context, records, json),
      .device = device_reports(context, records),
      .ok = all_passed(records)};
  return write_verify_report(run, nodes_of(records, transport), json);
}

// Step 1, local: the configuration, and the options into `context_options`.
ParallelConfig prepare(const VerifyOptions& options, ContextOptions& context_options, int rank, int size) {
  ParallelConfig config = options.plan.resolve(size);
  if (const std::string warning = strategy_deprecation(options.strategy); !warning.empty() && rank == 0) {
    fmt::print(stderr, "pgroups: warning: {}\n", warning);
  }
  context_options.strategy = parse_creation_strategy(options.strategy);
  // Checked here, where every rank settles its outcome, so that a rank without a GPU
  // ends the job with a clean status before any NCCL call.
  context_options.backend = parse_backend(options.backend);
  require_backend_usable(context_options.backend);
  context_options.agreed_settings = agreed_settings(options);
  // Agreed on by the context itself (agreement_text), as it decides the collectives.
  context_options.share_communicators = !options.no_share;
  options.mpi.apply(context_options, config, rank, size);
  return config;
}

int verify_job(const VerifyOptions& options, JobTransport& transport) {
  const int rank = transport.rank();
  ContextOptions context_options;
  context_options.timeout = options.mpi.in_effect;
  std::optional<ParallelConfig> config;
  std::optional<LocalFailure> failure;
  try {
    config = prepare(options, context_options, rank, transport.size());
  } catch (const std::exception& error) {
    failure = LocalFailure{exit_status_of(error), error.what()};
  }
  if (auto status = transport.settle(failure)) return *status;

  // Step 2, collective: create (the agreement comes first, inside the context).
  std::optional<CreatedContext> created;
  try {
    created.emplace(transport.create(*config, context_options));
  } catch (const std::exception& error) {
    return transport.end_step(error);
  }
  ParallelContext& context = created->context;

  // Step 3, collective: check each group, then every rank's record to every rank.
  bool ok = false;
  std::optional<IoError> output_error;
  try {
    const auto step = transport.enter(context_options, {"check", "the checks of the communicators"});
    const RankRecord mine = my_record(context, transport, created->seconds, options.format == "json");
    std::vector<RankRecord> records;
    const std::vector<std::string> gathered = transport.all_gather(mine.encode(), "the gathering of the checks");
    for (std::size_t r = 0; r < gathered.size(); ++r) {
      records.push_back(RankRecord::decode(gathered[r], static_cast<int>(r)));
    }
    ok = all_passed(records);
    // A failed write (full disk, closed pipe) fails rank 0 alone, after the collective
    // destruction, so that no rank is left waiting.
    if (rank == 0) output_error = write_report(context, options, records, transport);
  } catch (const std::exception& error) {
    return transport.end_step(error);
  }

  // Step 4, collective: free the communicators (destroy() guards itself), then leave together.
  try {
    if (context_options.before_step) context_options.before_step("destroy");
    context.destroy();
    transport.finish(context_options);
  } catch (const std::exception& error) {
    return transport.end_step(error);
  }
  return status_after_report(rank, output_error, ok ? 0 : static_cast<int>(ExitCode::verify_failed));
}

int run_verify(const VerifyOptions& options) {
  const std::unique_ptr<JobTransport> transport =
      job_transport(options.backend, options.bootstrap, options.mpi.in_effect);
  return verify_job(options, *transport);
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
