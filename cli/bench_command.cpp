// `pgroups bench`: the time to create every group of one configuration, measured side by
// side in one job beside what the transport cannot go below, so that the noise of the
// machine falls on all of them alike. Under MPI: each creation strategy, the default with
// sharing off, and K MPI_Comm_dup and K one-integer all-reduces. On a bootstrap (--backend
// gloo, or nccl beside gloo's CPU groups): the context, the same with sharing off (each
// until every distinct group carried one all-gather: a lazily connected group cannot hide
// its cost) and three of the bootstrap's all-gathers. Entries run round-robin after one
// warm-up round, each from a barrier, timed as the slowest rank; destruction and the
// gathering of the timings come after the clock stops. `--model` instead prints the cost
// model (calls and collectives per rank) from the layout alone, with no other rank.

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "emulation_bench.hpp"
#include "integer_option.hpp"
#include "job.hpp"
#include "megatron_comparison.hpp"
#include "mpi_options.hpp"
#include "output.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/config/config_json.hpp"
#include "pgroups/context/backend.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/cost/bootstrap_cost.hpp"
#include "pgroups/cost/creation_cost.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/report/plan_report.hpp"
#include "plan_options.hpp"
#include "subcommand.hpp"

namespace pgroups::cli {
namespace {

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
  EmulationBenchOptions emulation;
  CLI::Option* backend_option = nullptr;  // --emulate's default backend is gloo, not mpi
};

// One measured entry: a creation (a context with a strategy and sharing) or one of the
// transport's floors, timed as the slowest rank per repeat.
struct Entry {
  Entry(std::string entry_name, std::string entry_call, CreationStrategy entry_strategy, bool entry_share)
      : name(std::move(entry_name)), call(std::move(entry_call)), strategy(entry_strategy), share(entry_share) {}
  explicit Entry(Floor entry_floor) : name(entry_floor.name), call(entry_floor.call), floor(std::move(entry_floor)) {}

  std::string name;
  std::string call;
  CreationStrategy strategy = kDefaultCreationStrategy;
  bool share = true;  // ContextOptions::share_communicators (`no_share` measures it off)
  std::optional<Floor> floor;  // a floor, not a creation
  std::vector<double> seconds;
  std::map<std::string, std::vector<double>> mode_seconds;  // creations only, by group kind
  std::vector<double> rest_seconds;  // creations only: agreement, node query, bookkeeping

  [[nodiscard]] double min() const { return *std::min_element(seconds.begin(), seconds.end()); }
  [[nodiscard]] double median() const { return median_of(seconds); }
  static double median_of(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }
};

// Each of `local` as the slowest rank's, in one gathering.
std::vector<double> slowest(JobTransport& transport, const std::vector<double>& local) {
  std::string text;
  for (const double seconds : local) text += fmt::format("{:.9f} ", seconds);
  std::vector<double> worst(local.size(), 0.0);
  for (const std::string& from : transport.all_gather(text, "the timings")) {
    std::size_t at = 0;
    for (double& value : worst) {
      std::size_t used = 0;
      value = std::max(value, std::stod(from.substr(at), &used));
      at += used;
    }
  }
  return worst;
}

// A creation on this rank: the context's own seconds (after its start barrier, if any),
// and on a bootstrap one all-gather per distinct CPU group, so that a lazily connected
// group cannot hide its cost; the seconds of each kind and the rest, for the breakdown.
std::vector<double> time_creation(const Entry& entry, JobTransport& transport, const ParallelConfig& config,
                                  const ContextOptions& base, std::vector<std::string>& kinds) {
  ContextOptions options = base;
  options.strategy = entry.strategy;
  options.share_communicators = entry.share;
  CreatedContext created = transport.create(config, options);
  ParallelContext& context = created.context;
  double elapsed = created.seconds;
  if (!transport.creates_mpi_groups()) {
    const auto start = std::chrono::steady_clock::now();
    std::set<const void*> carried;
    for (const KindHandle& kind : context.kinds()) {
      if (!context.is_member(kind)) continue;
      const GroupHandle group = context.get_cpu_group(kind);
      if (carried.insert(group.gloo().get()).second) (void)group.all_gather(context.global_rank());
    }
    elapsed += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::vector<double> seconds = {elapsed, elapsed};  // the whole, then the rest
  kinds = context.kind_names();
  for (const KindHandle& kind : context.kinds()) {
    seconds.push_back(context.creation_seconds(kind));
    seconds[1] -= seconds.back();
  }
  context.destroy();
  return seconds;
}

// Every entry starts from a barrier. Each wait is guarded (the context guards its own
// creation and destruction); a guard's thread starts before the clock does, at the
// barrier, so that its start is never timed.
void measure(Entry& entry, JobTransport& transport, const ParallelConfig& config, const ContextOptions& base,
             bool keep) {
  const std::string description = fmt::format("the measurement of {}", entry.name);
  const JobStep step{"measure", description};
  std::vector<double> local;
  std::vector<std::string> kinds;
  {
    const auto guard = transport.enter(base, step);
    transport.barrier(step);
    if (entry.floor) local = {entry.floor->time()};
  }
  if (!entry.floor) local = time_creation(entry, transport, config, base, kinds);
  const auto guard = transport.enter(base, step);
  const std::vector<double> worst = slowest(transport, local);
  if (!keep) return;
  entry.seconds.push_back(worst[0]);
  if (entry.floor) return;
  entry.rest_seconds.push_back(worst[1]);
  for (std::size_t k = 0; k < kinds.size(); ++k) entry.mode_seconds[kinds[k]].push_back(worst[2 + k]);
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

// The env bootstrap's row of the model at `layout`'s world, appended to `text`; null (and
// a dash) where its bytes no longer fit in 64 bits, which happens at smaller worlds than
// the creation cost's.
nlohmann::json bootstrap_row(const Layout& layout, std::string& text) {
  try {
    const BootstrapCost cost = env_bootstrap_cost(layout);
    text += fmt::format("{:>9} {:>12} {:>12} {:>8} {:>10.3g} {:>25}+ {:>12.3g}+\n", layout.world_size(),
                        cost.round_trips_per_rank, cost.bytes_read_per_rank, cost.peers_per_rank, cost.store_seconds,
                        cost.new_group_loop_requests_per_rank, cost.new_group_loop_seconds);
    return {{"round_trips_per_rank", cost.round_trips_per_rank},
            {"bytes_read_per_rank", cost.bytes_read_per_rank},
            {"peers_per_rank", cost.peers_per_rank},
            {"requests_per_rank", cost.requests_per_rank},
            {"store_seconds", cost.store_seconds},
            {"new_group_loop_requests_per_rank_at_least", cost.new_group_loop_requests_per_rank},
            {"new_group_loop_seconds_at_least", cost.new_group_loop_seconds}};
  } catch (const ConfigError&) {
    text += fmt::format("{:>9} {:>12}\n", layout.world_size(), "-");
    return nullptr;
  }
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
  std::string bootstrap_text = fmt::format(
      "\nthe env bootstrap's store traffic per rank (gloo backend; docs/developing/scale.md), beside torch's "
      "new_group loop for the same groups; seconds of one store at {:.0f} requests/s (calibrated here):\n{:>9} "
      "{:>12} {:>12} {:>8} {:>10} {:>26} {:>13}\n",
      kStoreRequestsPerSecond, "W", "round trips", "bytes read", "peers", "seconds", "new_group loop requests",
      "loop seconds");
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
                    {"algorithms", algorithms},
                    {"env_bootstrap", bootstrap_row(layout, bootstrap_text)}});
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
    write_output(text + bootstrap_text + megatron_text(megatron_comparisons()));
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

// The creations a transport measures: under MPI each strategy, on a bootstrap the one
// creation it has; then the default with sharing off, and the transport's floors.
std::vector<Entry> entries_of(JobTransport& transport, std::int64_t communicators) {
  std::vector<Entry> entries;
  if (transport.creates_mpi_groups()) {
    for (CreationStrategy strategy : kAllCreationStrategies) {
      entries.emplace_back(std::string(strategy_name(strategy)), std::string(call_of(strategy)), strategy, true);
    }
    entries.emplace_back(std::string(kNoShareEntry),
                         std::string(strategy_name(kDefaultCreationStrategy)) + ", sharing off",
                         kDefaultCreationStrategy, false);
  } else {
    entries.emplace_back("gloo", "ParallelContext on the bootstrap, one all-gather per group", kDefaultCreationStrategy,
                         true);
    entries.emplace_back(std::string(kNoShareEntry), "the same, sharing off", kDefaultCreationStrategy, false);
  }
  for (Floor& floor : transport.floors(communicators)) entries.emplace_back(std::move(floor));
  return entries;
}

// The report of a bench on a bootstrap: each entry against the exchange floor.
std::string bootstrap_bench_text(const std::vector<Entry>& entries, const Layout& layout, Backend backend,
                                 std::string_view bootstrap, int repeats) {
  const double floor = entries.back().median();
  std::string out = fmt::format("pgroups bench: {} on the {} bootstrap, backend {}; {} repeats after a warm-up\n",
                                describe(layout.config()), bootstrap, backend_name(backend), repeats);
  out += fmt::format("{:<10} {:<60} {:>9} {:>11} {:>10}\n", "entry", "call", "min (ms)", "median (ms)", "/ exchange");
  for (const Entry& entry : entries) {
    out += fmt::format("{:<10} {:<60} {:>9.3f} {:>11.3f} {:>9.2f}x\n", entry.name, entry.call, entry.min() * 1e3,
                       entry.median() * 1e3, entry.median() / floor);
  }
  return out;
}

nlohmann::json bootstrap_bench_json(const std::vector<Entry>& entries, const Layout& layout, Backend backend,
                                    std::string_view bootstrap, int repeats) {
  nlohmann::json report = {{"schema_version", report::kSchemaVersion},
                           {"backend", backend_name(backend)},
                           {"bootstrap", bootstrap},
                           {"world_size", layout.world_size()},
                           {"repeats", repeats}};
  for (const Entry& entry : entries) report["entries"][entry.name] = {{"median_s", entry.median()}};
  return report;
}

// Rank 0's report.
void write_bench_report(const BenchOptions& options, const std::vector<Entry>& entries, const Layout& layout,
                        Backend backend, const JobTransport& transport, std::int64_t communicators) {
  const bool json = options.format == "json";
  if (!transport.creates_mpi_groups()) {
    write_output(json ? bootstrap_bench_json(entries, layout, backend, transport.name(), options.repeats).dump() + '\n'
                      : bootstrap_bench_text(entries, layout, backend, transport.name(), options.repeats));
  } else if (json) {
    nlohmann::json report = bench_json(entries, layout.world_size(), communicators, options.repeats, layout.config());
    report["backend"] = backend_name(backend);
    write_output(report.dump() + '\n');
  } else {
    write_output(bench_text(entries, layout, backend, communicators, options.repeats));
  }
}

int bench_job(const BenchOptions& options, JobTransport& transport) {
  const int rank = transport.rank();
  const int size = transport.size();
  ContextOptions base;
  base.timeout = options.mpi.in_effect;
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
  if (auto status = transport.settle(failure)) return *status;

  const Layout layout(*config);
  // The context duplicates the world once: as the world kind where there is one
  // (`global`), otherwise beside the kinds.
  const auto k = static_cast<std::int64_t>(layout.group_kinds().size()) + (layout.world_kind() ? 0 : 1);
  std::vector<Entry> entries = entries_of(transport, k);
  try {
    // Round-robin over the entries, so that a slow moment of the machine hits one
    // repeat of each rather than every repeat of one. The first entry's context agrees
    // on the settings before any other collective of the measurements.
    for (int repeat = -1; repeat < options.repeats; ++repeat) {
      for (Entry& entry : entries) measure(entry, transport, *config, base, /*keep=*/repeat >= 0);
    }
  } catch (const std::exception& error) {
    return transport.end_step(error);
  }
  // A failed write (full disk, closed pipe) fails rank 0 alone, after the ranks leave together.
  std::optional<IoError> output_error;
  if (rank == 0) {
    try {
      write_bench_report(options, entries, layout, base.backend, transport, k);
    } catch (const IoError& error) {
      output_error = error;
    }
  }
  try {
    transport.finish(base);
  } catch (const std::exception& error) {
    return transport.end_step(error);
  }
  return status_after_report(rank, output_error, 0);
}

int run_bench(const BenchOptions& options) {
  const EmulationBenchOptions& emulation = options.emulation;
  if (!emulation.ranks &&
      (!emulation.store.empty() || emulation.ranks_per_client || emulation.new_group_loop || emulation.loop_groups)) {
    throw ConfigError(
        "--store, --relay, --loop and --loop-groups are options of --emulate: give --emulate N with them");
  }
  if (options.model && emulation.ranks) {
    throw ConfigError("--model and --emulate are two benchmarks: give one of them");
  }
  if (options.model) return run_model(options);
  if (emulation.ranks) {
    const bool given = options.backend_option != nullptr && options.backend_option->count() > 0;
    return run_emulation_bench(options.emulation, options.plan, given ? options.backend : "gloo", options.format);
  }
  const std::unique_ptr<JobTransport> transport =
      job_transport(options.backend, options.bootstrap, options.mpi.in_effect);
  return bench_job(options, *transport);
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
  options->backend_option =
      app->add_option("--backend", options->backend,
                      "mpi, nccl (each strategy's context also creates the NCCL world and one split per kind; on a "
                      "bootstrap other than MPI's, beside gloo's CPU groups), or gloo (the gloo backend's creation on "
                      "--bootstrap, beside the bootstrap's own all-gathers)")
          ->check(CLI::IsMember({"mpi", "nccl", "gloo"}));
  app->add_option("--bootstrap", options->bootstrap,
                  "auto (the launcher's), mpi, pmix or env (docs/using/bootstrap.md); --backend mpi needs mpi")
      ->check(CLI::IsMember(bootstrap_names()));
  add_integer_option(*app, "--emulate", options->emulation.ranks,
                     "Play N ranks' store traffic of the creation from this one process against a store "
                     "(--store, or pgroups' server in a process of its own), with no MPI and no other rank; "
                     "--backend gloo or nccl chooses what travels (docs/developing/scale.md)");
  app->add_option("--store", options->emulation.store,
                  "--emulate: HOST:PORT of the store to emulate against (torch's TCPStore, say); default pgroups' own");
  add_integer_option(*app, "--relay", options->emulation.ranks_per_client,
                     "--emulate: consecutive ranks behind each store client, a node relay (default 1, or the fewest "
                     "powers of two whose clients fit in the descriptors this process may open)");
  app->add_flag("--loop", options->emulation.new_group_loop,
                "--emulate: play torch's new_group loop for the same groups instead (every rank enters every group's "
                "store-based barrier, as Megatron's calls make it)");
  add_integer_option(
      *app, "--loop-groups", options->emulation.loop_groups,
      "--emulate --loop: the first this many groups only, the seconds of all extrapolated (default all)");
  // Each measurement (barrier, baselines, reductions) is the step `measure`.
  options->mpi.add_to(*app, {"measure", "finalize"});
  return {app,
          [options] {
            // --model and --emulate wait for no one
            if (!options->model && !options->emulation.ranks) options->mpi.resolve();
            return run_bench(*options);
          },
          [options] { return !options->model && !options->emulation.ranks; }};
}

}  // namespace pgroups::cli
