// `pgroups verify --backend gloo` (and `--backend nccl` on a bootstrap other than MPI's):
// the verify of verify_command.cpp on a bootstrap, with no MPI in the job unless the
// bootstrap is MPI's. Every CPU group is a gloo context (ParallelContext on a Bootstrap),
// and with NCCL every kind has an NCCL communicator too, checked by an ncclAllReduce of
// the global ranks (ParallelContext::check_device_groups); each gloo context is checked from the outside (its size,
// this rank's rank in it and a gloo all-gather of the members' global ranks) against the layout; every rank's
// observations and node reach every rank in one bootstrap all-gather, and rank 0 reports as the MPI verify does. Every
// wait is bounded (gloo's and the bootstrap's timeouts), so a rank that never arrives ends the others with status 8,
// naming the ranks where the bootstrap knows them.

#include <fmt/format.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bootstrap_job.hpp"
#include "output.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/gloo/gloo_groups.hpp"
#include "pgroups/launch/launcher.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/report/locality_report.hpp"
#include "pgroups/report/verify_report.hpp"
#include "print_warnings.hpp"
#include "verify_checks.hpp"
#include "verify_on_bootstrap.hpp"

namespace pgroups::cli {
namespace {

using report::LiveNodes;
using Clock = std::chrono::steady_clock;

Observation observe(const ParallelContext& context, const KindHandle& handle) {
  if (!context.is_member(handle)) return Observation{.rank = -1, .size = 0, .members = {}, .ok = true};
  const std::shared_ptr<::gloo::Context> group = context.get_cpu_group(handle).gloo();
  const std::vector<std::int64_t> members = gloo::all_gather(group, context.global_rank());
  Observation seen{.rank = gloo::rank_in(*group),
                   .size = gloo::size_of(*group),
                   .members = {members.begin(), members.end()},
                   .ok = false};
  return judged(context, handle, std::move(seen));
}

std::string host_name() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  return host.data();
}

// A node: this machine's name and, where the launcher numbers nodes (Slurm, torchrun), the
// node's index, since containers on several machines may share a host name.
std::string node_key(const LauncherInfo& launcher) {
  return launcher.node ? fmt::format("{}#{}", host_name(), *launcher.node) : host_name();
}

// One rank's part of the report, as it travels through the bootstrap.
nlohmann::json my_part(const ParallelContext& context, const std::vector<Observation>& seen,
                       const std::vector<GroupCheck>& device_checks, double create_seconds,
                       const Bootstrap& bootstrap) {
  const LauncherInfo launcher = detect_launcher();
  nlohmann::json kinds = nlohmann::json::array();
  const std::vector<KindHandle> handles = context.kinds();
  for (std::size_t k = 0; k < handles.size(); ++k) {
    kinds.push_back({seen[k].rank, seen[k].size, seen[k].ok, seen[k].members, context.creation_seconds(handles[k])});
  }
  // Per kind, this rank's NCCL check: whether it holds one, the expected and the actual sum.
  nlohmann::json device = nlohmann::json::array();
  if (context.backend() == Backend::nccl) {
    for (const KindHandle& handle : handles) {
      const auto held = std::find_if(device_checks.begin(), device_checks.end(),
                                     [&handle](const GroupCheck& check) { return check.kind == handle.name(); });
      const bool member = held != device_checks.end();
      device.push_back(
          {member, member ? held->expected : 0, member ? held->actual : 0, context.device_creation_seconds(handle)});
    }
  }
  return {{"create", create_seconds},
          {"device", device},
          {"node", node_key(launcher)},
          {"host", host_name()},
          {"local_rank", bootstrap.local_rank()},
          {"launcher_local_rank", launcher.local_rank ? *launcher.local_rank : -1},
          {"topology_address", launcher.topology_address.value_or(std::string())},
          {"kinds", kinds}};
}

// The job's nodes from every rank's part: a node is named by its first rank.
LiveNodes nodes_of(const std::vector<nlohmann::json>& parts, BootstrapKind bootstrap) {
  LiveNodes nodes;
  nodes.launcher = detect_launcher();
  nodes.local_rank_source = fmt::format("the {} bootstrap's node-local ranks", bootstrap_name(bootstrap));
  std::map<std::string, std::int64_t> first_rank;
  for (std::size_t r = 0; r < parts.size(); ++r) {
    const auto [at, added] = first_rank.emplace(parts[r]["node"].get<std::string>(), static_cast<std::int64_t>(r));
    if (added) nodes.hosts.push_back(parts[r]["host"].get<std::string>());
    nodes.node_of_rank.push_back(at->second);
    nodes.local_rank_on_node.push_back(parts[r]["local_rank"].get<std::int64_t>());
    nodes.launcher_local_rank.push_back(parts[r]["launcher_local_rank"].get<std::int64_t>());
    nodes.topology_address.push_back(parts[r]["topology_address"].get<std::string>());
  }
  return nodes;
}

// Rank 0's picture of every kind, from every rank's part.
std::vector<report::VerifyKindReport> kind_reports(const ParallelContext& context,
                                                   const std::vector<nlohmann::json>& parts, bool with_groups) {
  std::vector<report::VerifyKindReport> reports;
  const std::vector<KindHandle> handles = context.kinds();
  for (std::size_t k = 0; k < handles.size(); ++k) {
    report::VerifyKindReport report;
    report.kind = handles[k].name();
    std::vector<std::vector<int>> members;
    for (const nlohmann::json& part : parts) {
      const nlohmann::json& kind = part["kinds"][k];
      report.local_ranks.push_back(kind[0].get<int>());
      report.sizes.push_back(kind[1].get<int>());
      report.ok = report.ok && kind[2].get<bool>();
      members.push_back(kind[3].get<std::vector<int>>());
      report.create_seconds = std::max(report.create_seconds, kind[4].get<double>());
    }
    if (with_groups) report.groups = distinct_groups(members);
    reports.push_back(std::move(report));
  }
  return reports;
}

// Rank 0's picture of every kind's NCCL communicators (empty without NCCL).
std::vector<report::VerifyDeviceReport> device_reports(const ParallelContext& context,
                                                       const std::vector<nlohmann::json>& parts) {
  std::vector<report::VerifyDeviceReport> reports;
  if (context.backend() != Backend::nccl) return reports;
  const std::vector<KindHandle> handles = context.kinds();
  for (std::size_t k = 0; k < handles.size(); ++k) {
    report::VerifyDeviceReport report;
    report.kind = handles[k].name();
    for (const nlohmann::json& part : parts) {
      const nlohmann::json& check = part["device"][k];
      report.create_seconds = std::max(report.create_seconds, check[3].get<double>());
      if (!check[0].get<bool>()) continue;  // no member of the kind
      report.expected.push_back(check[1].get<std::int64_t>());
      report.actual.push_back(check[2].get<std::int64_t>());
      report.ok = report.ok && report.expected.back() == report.actual.back();
    }
    reports.push_back(std::move(report));
  }
  return reports;
}

// Rank 0's report; a failed write is its error alone, after every rank's checks.
std::optional<IoError> write_report(const ParallelContext& context, const VerifyOptions& options,
                                    const std::vector<nlohmann::json>& parts, bool ok, BootstrapKind bootstrap) {
  double create_seconds = 0.0;
  for (const nlohmann::json& part : parts) create_seconds = std::max(create_seconds, part["create"].get<double>());
  const report::VerifyRun run{.layout = context.layout(),
                              .strategy = "gloo",
                              .backend = backend_name(context.backend()),
                              .share_communicators = context.options().share_communicators,
                              .create_seconds = create_seconds,
                              .bill = context.communicator_bill(),
                              .kinds = kind_reports(context, parts, options.format == "json"),
                              .device = device_reports(context, parts),
                              .ok = ok};
  return write_verify_report(run, nodes_of(parts, bootstrap), options.format == "json");
}

// Step 1, local: the configuration and the options.
ParallelConfig prepare(const VerifyOptions& options, ContextOptions& context_options, int rank, int size) {
  ParallelConfig config = options.plan.resolve(size);
  context_options.backend = parse_backend(options.backend);
  // A rank without a GPU ends the job here, with the others, before any NCCL call.
  require_backend_usable(context_options.backend);
  context_options.strategy = parse_creation_strategy(options.strategy);
  context_options.agreed_settings = agreed_settings(options);
  context_options.share_communicators = !options.no_share;
  options.mpi.apply(context_options, config, rank, size);
  return config;
}

int verify_job(const VerifyOptions& options, Bootstrap& bootstrap, ContextOptions& context_options) {
  const int rank = bootstrap.rank();
  const std::chrono::milliseconds timeout = options.mpi.in_effect;
  std::optional<ParallelConfig> config;
  std::optional<LocalFailure> failure;
  try {
    config = prepare(options, context_options, rank, bootstrap.size());
  } catch (const std::exception& error) {
    failure = LocalFailure{exit_status_of(error), error.what()};
  }
  if (auto status = settle_on(bootstrap, failure, timeout)) return *status;

  // Step 2, collective: create (the agreement comes first, inside the context).
  std::optional<ParallelContext> context;
  double create_seconds = 0.0;
  try {
    const auto start = Clock::now();
    context.emplace(*config, bootstrap, context_options);
    create_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  } catch (const std::exception& error) {
    return end_step_on_bootstrap(rank, error);
  }

  // Step 3, collective: check each group, then every rank's part to every rank.
  std::vector<nlohmann::json> parts;
  bool ok = true;
  std::optional<IoError> output_error;
  try {
    if (context_options.before_step) context_options.before_step("check");
    std::vector<Observation> seen;
    for (const KindHandle& handle : context->kinds()) seen.push_back(observe(*context, handle));
    // With NCCL, every communicator all-reduces its members' global ranks (collective over the world).
    const std::vector<GroupCheck> device_checks =
        context->backend() == Backend::nccl ? context->check_device_groups() : std::vector<GroupCheck>{};
    const std::vector<std::string> gathered =
        bootstrap.all_gather(my_part(*context, seen, device_checks, create_seconds, bootstrap).dump(), timeout,
                             "the gathering of the checks");
    for (const std::string& part : gathered) {
      parts.push_back(nlohmann::json::parse(part));
      for (const nlohmann::json& kind : parts.back()["kinds"]) ok = ok && kind[2].get<bool>();
      for (const nlohmann::json& check : parts.back()["device"]) ok = ok && check[1] == check[2];
    }
    if (rank == 0) output_error = write_report(*context, options, parts, ok, bootstrap.kind());
  } catch (const std::exception& error) {
    return end_step_on_bootstrap(rank, error);
  }

  // Step 4: close the contexts (no collective), then leave together, so that the rank
  // serving the store does not go first.
  try {
    if (context_options.before_step) context_options.before_step("destroy");
    context->destroy();
    if (context_options.before_step) context_options.before_step("finalize");
    bootstrap.barrier(timeout, "the end of the job");
  } catch (const std::exception& error) {
    return end_step_on_bootstrap(rank, error);
  }
  if (output_error) {
    print_job_error(rank, true, output_error->what());
    return static_cast<int>(output_error->exit_code());
  }
  return ok ? 0 : static_cast<int>(ExitCode::verify_failed);
}

}  // namespace

int run_verify_on_bootstrap(const VerifyOptions& options) {
  return run_on_bootstrap(options.bootstrap, options.mpi.in_effect,
                          [&options](Bootstrap& bootstrap, ContextOptions& context_options) {
                            return verify_job(options, bootstrap, context_options);
                          });
}

}  // namespace pgroups::cli
