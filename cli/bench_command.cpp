// `pgroups bench`: the time to create every group of one configuration, with each
// creation strategy and two baselines, measured side by side in one MPI job so that the
// noise of the machine falls on all of them alike. `--model` instead prints the cost
// model (calls and collectives per rank) from the layout alone, without MPI.

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_on_bootstrap.hpp"
#include "integer_option.hpp"
#include "megatron_comparison.hpp"
#include "mpi_job.hpp"
#include "mpi_options.hpp"
#include "output.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/config/config_json.hpp"
#include "pgroups/context/backend.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/cost/creation_cost.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/mpi/check.hpp"
#include "pgroups/mpi/session.hpp"
#include "pgroups/report/plan_report.hpp"
#include "plan_options.hpp"
#include "subcommand.hpp"

namespace pgroups::cli {
namespace {

using mpi::check;

struct BenchOptions {
  PlanOptions plan;
  int repeats = 5;
  std::string format = "text";
  bool model = false;
  std::int64_t max_world = std::int64_t{1} << 20;
  CLI::Option* max_world_option = nullptr;
  std::string backend = "mpi";
  std::string bootstrap = "auto";
  MpiOptions mpi;  // --timeout and the --inject-* testing flags
};

// One measured entry: a strategy or a baseline, timed as the slowest rank per repeat.
struct Entry {
  Entry(std::string entry_name, std::string entry_call, std::optional<CreationStrategy> entry_strategy = std::nullopt)
      : name(std::move(entry_name)), call(std::move(entry_call)), strategy(entry_strategy) {}

  std::string name;
  std::string call;
  std::optional<CreationStrategy> strategy;  // none for the baselines
  bool share = true;  // ContextOptions::share_communicators (`--no-share` measures it off)
  std::vector<double> seconds;
  std::map<std::string, std::vector<double>> mode_seconds;  // strategies only, by group kind
  std::vector<double> rest_seconds;  // strategies only: agreement, node query, bookkeeping

  [[nodiscard]] double min() const { return *std::min_element(seconds.begin(), seconds.end()); }
  [[nodiscard]] double median() const { return median_of(seconds); }
  static double median_of(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }
};

double slowest(MPI_Comm world, double local) {
  double result = 0.0;
  check(MPI_Allreduce(&local, &result, 1, MPI_DOUBLE, MPI_MAX, world), "MPI_Allreduce");
  return result;
}

// Every entry starts from a barrier, and only the creation is timed: destruction and
// the reduction of the timings come after the clock stops. Each wait is watched (the
// context watches its own creation and destruction); a watchdog's thread starts before
// the clock does, at the barrier, so that its start is never timed.
void measure(Entry& entry, MPI_Comm world, const ParallelConfig& config, const ContextOptions& base, std::int64_t k,
             bool keep, int rank, int size) {
  const std::string description = fmt::format("the measurement of {}", entry.name);
  const mpi::Step step{"measure", description};
  if (entry.strategy) {
    {
      const WatchedPhase phase(base, rank, size, step);
      check(MPI_Barrier(world), "MPI_Barrier");
    }
    const double start = MPI_Wtime();
    ContextOptions context_options = base;
    context_options.strategy = *entry.strategy;
    context_options.share_communicators = entry.share;
    ParallelContext context(config, world, context_options);
    const double elapsed = MPI_Wtime() - start;
    std::map<std::string, double> per_mode;
    double rest = elapsed;
    for (const std::string& mode : context.kind_names()) {
      per_mode[mode] = context.creation_seconds(mode);
      rest -= per_mode[mode];
    }
    context.destroy();
    const WatchedPhase phase(base, rank, size, step);
    const double total = slowest(world, elapsed);
    const double slowest_rest = slowest(world, rest);
    if (!keep) return;
    entry.seconds.push_back(total);
    entry.rest_seconds.push_back(slowest_rest);
    for (const auto& [mode, seconds] : per_mode) entry.mode_seconds[mode].push_back(slowest(world, seconds));
    return;
  }
  const WatchedPhase phase(base, rank, size, step);
  check(MPI_Barrier(world), "MPI_Barrier");
  double elapsed = 0.0;
  if (entry.name == "limit") {
    std::vector<MPI_Comm> dups(static_cast<std::size_t>(k), MPI_COMM_NULL);
    const double start = MPI_Wtime();
    for (MPI_Comm& dup : dups) check(MPI_Comm_dup(world, &dup), "MPI_Comm_dup");
    elapsed = MPI_Wtime() - start;
    for (MPI_Comm& dup : dups) check(MPI_Comm_free(&dup), "MPI_Comm_free");
  } else {
    int in = 1;
    int out = 0;
    const double start = MPI_Wtime();
    for (std::int64_t i = 0; i < k; ++i) check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, world), "MPI_Allreduce");
    elapsed = MPI_Wtime() - start;
  }
  const double total = slowest(world, elapsed);
  if (keep) entry.seconds.push_back(total);
}

std::string_view call_of(CreationStrategy strategy) {
  switch (strategy) {
    case CreationStrategy::comm_split: return "MPI_Comm_split per kind";
    case CreationStrategy::create_group: return "MPI_Comm_create_group per kind";
    case CreationStrategy::per_group: return "MPI_Comm_create per group";
    case CreationStrategy::comm_create: return "MPI_Comm_create per kind";
  }
  return "";
}

constexpr std::string_view kNoShareEntry = "no_share";

const Entry& find(const std::vector<Entry>& entries, std::string_view name) {
  return *std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == name; });
}

nlohmann::json bench_json(const std::vector<Entry>& entries, std::int64_t w, std::int64_t k, int repeats,
                          const ParallelConfig& config) {
  nlohmann::json strategies = nlohmann::json::object();
  for (const Entry& entry : entries) {
    strategies[entry.name] = {{"min_s", entry.min()}, {"median_s", entry.median()}, {"call", entry.call}};
  }
  // "split" names the default strategy, whatever MPI call it uses underneath.
  const std::string default_name(strategy_name(kDefaultCreationStrategy));
  strategies["split"] = strategies[default_name];
  strategies["split"]["strategy"] = default_name;
  const Entry& shared = find(entries, default_name);
  const Entry& separate = find(entries, kNoShareEntry);
  return {{"schema_version", report::kSchemaVersion},
          {"world_size", w},
          {"sharing",
           {{"on_median_s", shared.median()},
            {"off_median_s", separate.median()},
            {"on_over_off", shared.median() / separate.median()},
            {"communicators",
             {{"on", communicator_bill(Layout(config), 0, true).created},
              {"off", communicator_bill(Layout(config), 0, false).created}}}}},
          {"kinds", k},
          {"modes", k},  // deprecated: "kinds" holds the same (docs/reference/spec.md §4)
          {"repeats", repeats},
          {"config", config_json(config)},
          {"default_strategy", default_name},
          {"strategies", strategies}};
}

std::string bench_text(const std::vector<Entry>& entries, const Layout& layout, Backend backend, std::int64_t k,
                       int repeats) {
  const Entry& limit = find(entries, "limit");
  const std::string default_name(strategy_name(kDefaultCreationStrategy));
  const Entry& chosen = find(entries, default_name);
  std::string out = fmt::format(
      "pgroups bench: {} (data {}), backend {}, K = {} communicators, {} repeats after a warm-up, slowest rank per "
      "repeat\n\n",
      describe(layout.config()), layout.data_parallel_size(), backend_name(backend), k, repeats);
  out +=
      fmt::format("{:<14} {:<34} {:>10} {:>12} {:>14}\n", "entry", "call", "min (ms)", "median (ms)", "median/limit");
  for (const Entry& entry : entries) {
    out += fmt::format("{:<14} {:<34} {:>10.3f} {:>12.3f} {:>13.2f}x\n",
                       entry.name + (entry.name == default_name ? "*" : ""), entry.call, entry.min() * 1e3,
                       entry.median() * 1e3, entry.median() / limit.median());
  }
  out += fmt::format(
      "\n* the default strategy, `split` in the JSON output. per_group / {} (median): {:.1f}x; "
      "{} / limit: {:.2f}x\n",
      default_name, find(entries, "per_group").median() / chosen.median(), default_name,
      chosen.median() / limit.median());
  out += fmt::format("sharing on / off ({}, median): {:.2f}x ({} against {} communicators per rank on rank 0)\n",
                     default_name, chosen.median() / find(entries, kNoShareEntry).median(),
                     communicator_bill(layout, 0, true).created, communicator_bill(layout, 0, false).created);
  out += fmt::format("\nwhere the time goes ({}, median of the slowest rank per kind):\n", default_name);
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    const std::string& mode = layout.group_kinds()[kind].name;
    const double seconds = Entry::median_of(chosen.mode_seconds.at(mode));
    out += fmt::format("  {:<20} {:>8.3f} ms{}\n", mode, seconds * 1e3,
                       layout.world_kind() == kind ? "  (MPI_Comm_dup of the world)" : "");
  }
  out += fmt::format("  {:<20} {:>8.3f} ms  (configuration agreement, node query, bookkeeping)\n", "rest",
                     Entry::median_of(chosen.rest_seconds) * 1e3);
  return out;
}

int run_model(const BenchOptions& options) {
  ParallelConfig config = options.plan.resolve(std::int64_t{0});
  // The smallest world of the configuration (data parallel size 1) validates the sizes.
  std::int64_t unit = 0;
  std::int64_t largest = options.max_world;
  if (fixes_world_size(config)) {
    // A mesh fixes its world: one row, at the product of its sizes.
    config.world_size = 0;
    unit = Layout(config).world_size();
    largest = unit;
    if (options.max_world_option != nullptr && options.max_world_option->count()) {
      throw ConfigError(
          fmt::format("--max-world does not apply to a mesh: a mesh fixes its world (W={}, the product "
                      "of its sizes), so the model has one row; leave --max-world out",
                      unit));
    }
  } else {
    if (config.pipeline < 1 || config.tensor_size < 1 ||
        __builtin_mul_overflow(config.pipeline, config.tensor_size, &unit)) {
      unit = 1;
    }
    config.world_size = unit;
    validate(config);
  }
  nlohmann::json rows = nlohmann::json::array();
  std::string text = fmt::format(
      "creation cost model: {} (data parallel size grows with W)\ncalls = group-creation calls per rank, colls = "
      "collectives each rank enters (agreement included)\n\n{:>9}",
      describe(config), "W");
  bool header_done = false;
  if (largest < unit) {
    throw ConfigError(
        fmt::format("--max-world {} is smaller than the smallest world of the configuration, "
                    "pipeline {} * tensor {} = {}",
                    options.max_world, config.pipeline, config.tensor_size, unit));
  }
  // Doubling is checked against the largest world before it happens, so it never
  // overflows.
  for (std::int64_t w = unit;; w *= 2) {
    config.world_size = w;
    const Layout layout(config);
    const auto costs = creation_costs(layout);
    if (!header_done) {
      for (const CreationCost& cost : costs) text += fmt::format(" {:>24}", cost.algorithm);
      text += fmt::format("\n{:>9}", "");
      for (std::size_t i = 0; i < costs.size(); ++i) text += fmt::format(" {:>11} {:>12}", "calls", "colls");
      text += '\n';
      header_done = true;
    }
    text += fmt::format("{:>9}", w);
    nlohmann::json algorithms = nlohmann::json::object();
    for (const CreationCost& cost : costs) {
      text += fmt::format(" {:>11} {:>12}", cost.calls_per_rank, cost.collectives_per_rank);
      algorithms[std::string(cost.algorithm)] = {{"call", cost.call},
                                                 {"calls_per_rank", cost.calls_per_rank},
                                                 {"collectives_per_rank", cost.collectives_per_rank},
                                                 {"largest_collective", cost.largest_collective}};
    }
    text += '\n';
    rows.push_back({{"world_size", w},
                    {"kinds", layout.group_kinds().size()},
                    {"modes", layout.group_kinds().size()},  // deprecated: "kinds" holds the same
                    {"algorithms", algorithms}});
    if (w > largest / 2) break;
  }
  if (options.format == "json") {
    write_output(nlohmann::json{{"schema_version", report::kSchemaVersion},
                                {"config", config_json(config)},
                                {"model", rows},
                                {"megatron", megatron_json(megatron_comparisons())}}
                     .dump() +
                 '\n');
  } else {
    write_output(text + megatron_text(megatron_comparisons()));
  }
  return 0;
}

// What every rank must hold alike beyond the configuration and backend (which the
// context agrees on itself): --repeats decides how many contexts and collectives run;
// --format changes only rank 0's output, and is agreed too so that no flag of a run
// differs silently between ranks.
std::string agreed_settings(const BenchOptions& options) {
  return fmt::format("bench repeats={} format={}", options.repeats, options.format);
}

int bench_job(const BenchOptions& options, ContextOptions& base, int rank, int size) {
  const MPI_Comm world = MPI_COMM_WORLD;
  std::optional<ParallelConfig> config;
  std::optional<LocalFailure> failure;
  try {
    if (options.repeats < 1) {
      throw ConfigError(fmt::format("--repeats {} is invalid: at least one repeat is needed", options.repeats));
    }
    config = options.plan.resolve(size);
    validate(*config);
    base.backend = parse_backend(options.backend);
    require_backend_usable(base.backend);
    base.agreed_settings = agreed_settings(options);
    options.mpi.apply(base, *config, rank, size);
  } catch (const std::exception& error) {
    failure = LocalFailure{exit_status_of(error), error.what()};
  }
  if (auto status = settle(world, rank, failure, options.mpi.in_effect)) return *status;

  const Layout layout(*config);
  // The context duplicates the world once: as the world kind where there is one
  // (`global`), otherwise beside the kinds.
  const auto k = static_cast<std::int64_t>(layout.group_kinds().size()) + (layout.world_kind() ? 0 : 1);
  std::vector<Entry> entries;
  for (CreationStrategy strategy : kAllCreationStrategies) {
    entries.emplace_back(std::string(strategy_name(strategy)), std::string(call_of(strategy)), strategy);
  }
  // The default strategy with sharing off (one communicator per kind), against sharing on
  // in the same run.
  entries.emplace_back(std::string(kNoShareEntry),
                       std::string(strategy_name(kDefaultCreationStrategy)) + ", sharing off",
                       kDefaultCreationStrategy);
  entries.back().share = false;
  entries.emplace_back("limit", fmt::format("{} x MPI_Comm_dup", k));
  entries.emplace_back("allreduce", fmt::format("{} x MPI_Allreduce(1 int)", k));

  try {
    // Round-robin over the entries, so that a slow moment of the machine hits one
    // repeat of each rather than every repeat of one. The first entry's context agrees
    // on the settings before any other collective of the measurements.
    for (int repeat = -1; repeat < options.repeats; ++repeat) {
      for (Entry& entry : entries) measure(entry, world, *config, base, k, /*keep=*/repeat >= 0, rank, size);
    }
  } catch (const std::exception& error) {
    return end_collective_step(world, rank, error);
  }
  if (rank == 0) {
    if (options.format == "json") {
      nlohmann::json report = bench_json(entries, size, k, options.repeats, *config);
      report["backend"] = backend_name(base.backend);
      write_output(report.dump() + '\n');
    } else {
      write_output(bench_text(entries, layout, base.backend, k, options.repeats));
    }
  }
  return 0;
}

int run_bench(const BenchOptions& options) {
  if (options.model) return run_model(options);
  if (options.backend == "gloo") {
    return run_bench_on_bootstrap({.plan = &options.plan,
                                   .mpi = &options.mpi,
                                   .repeats = options.repeats,
                                   .format = options.format,
                                   .bootstrap = options.bootstrap});
  }
  if (const BootstrapKind requested = parse_bootstrap(options.bootstrap);
      requested != BootstrapKind::automatic && requested != BootstrapKind::mpi) {
    throw ConfigError(
        fmt::format("--backend {} needs the MPI bootstrap, not --bootstrap {}: use --backend gloo, "
                    "which runs on every bootstrap",
                    options.backend, options.bootstrap));
  }
  const std::unique_ptr<mpi::Session> session = mpi::start_session(options.mpi.in_effect);
  const int rank = session->world().rank();
  const int size = session->world().size();
  ContextOptions base;
  base.timeout = options.mpi.in_effect;
  const int status = bench_job(options, base, rank, size);
  finish_job(*session, base, rank, size);
  return status;
}

}  // namespace

Subcommand add_bench_command(CLI::App& parent) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* app = parent.add_subcommand(
      "bench",
      "Time group creation with each strategy beside MPI's floor (run with mpirun; --backend gloo under any "
      "launcher); --model needs no MPI");
  options->plan.add_to(*app, /*with_world_size=*/false);
  add_integer_option(
      *app, "--repeats", options->repeats,
      "Timed repeats after one warm-up (default 5); the same on every rank (agreed: status 7 otherwise)");
  app->add_option("--format", options->format, "Output format; the same on every rank (agreed: status 7 otherwise)")
      ->check(CLI::IsMember({"text", "json"}));
  app->add_flag("--model", options->model,
                "Print the cost model (calls and collectives per rank) for W up to --max-world, without MPI");
  options->max_world_option =
      add_integer_option(*app, "--max-world", options->max_world, "Largest world of the cost model (default 1048576)");
  app->add_option("--backend", options->backend,
                  "mpi, nccl (each strategy's context also creates the NCCL world and one split per kind), or gloo "
                  "(the gloo backend's creation on --bootstrap, beside the bootstrap's own all-gathers)")
      ->check(CLI::IsMember({"mpi", "nccl", "gloo"}));
  app->add_option("--bootstrap", options->bootstrap,
                  "With --backend gloo: auto (the launcher's), mpi, pmix or env (docs/using/bootstrap.md)")
      ->check(CLI::IsMember(bootstrap_names()));
  // Each measurement (barrier, baselines, reductions) is the step `measure`.
  options->mpi.add_to(*app, {"measure", "finalize"});
  return {app,
          [options] {
            if (!options->model) options->mpi.resolve();  // --model waits for no one
            return run_bench(*options);
          },
          [options] { return !options->model; }};
}

}  // namespace pgroups::cli
