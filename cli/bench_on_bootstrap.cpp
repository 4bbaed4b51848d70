// `pgroups bench --backend gloo`: the gloo backend's creation timed on a bootstrap (the
// launcher's: torchrun's store, PMIx, MPI), beside its floor, as the MPI bench times the
// strategies beside K MPI_Comm_dup. Entries, round-robin after one warm-up round:
//   gloo        ParallelContext on the bootstrap with backend gloo, until every distinct
//               group carried one all-gather (a lazily connected group cannot hide its cost)
//   no_share    the same with sharing off (one context per kind)
//   exchange    three all-gathers of the bootstrap alone: what the creation cannot go
//               below (the agreement, the addresses, the barrier after the connections)
// Each is timed from a bootstrap barrier, the slowest rank; closing comes after the clock
// stops. Every wait is bounded by the timeout.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench_on_bootstrap.hpp"
#include "bootstrap_job.hpp"
#include "output.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/gloo/gloo_groups.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/report/plan_report.hpp"

namespace pgroups::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct GlooEntry {
  std::string name;
  std::string call;
  std::vector<double> seconds;
  [[nodiscard]] double median() const {
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
};

// The slowest rank's seconds, through the bootstrap.
double slowest(Bootstrap& bootstrap, double local, std::chrono::milliseconds timeout) {
  double worst = 0.0;
  for (const std::string& text : bootstrap.all_gather(fmt::format("{:.9f}", local), timeout, "the timings")) {
    worst = std::max(worst, std::stod(text));
  }
  return worst;
}

double measure(const GlooEntry& entry, Bootstrap& bootstrap, const ParallelConfig& config, const ContextOptions& base) {
  const std::chrono::milliseconds timeout = *base.timeout;
  bootstrap.barrier(timeout, "the start of a measurement");
  const auto start = Clock::now();
  if (entry.name == "exchange") {
    for (int i = 0; i < 3; ++i) (void)bootstrap.all_gather({}, timeout, "the exchange floor");
    return slowest(bootstrap, std::chrono::duration<double>(Clock::now() - start).count(), timeout);
  }
  ContextOptions options = base;
  options.share_communicators = entry.name != "no_share";
  ParallelContext context(config, bootstrap, options);
  std::set<const ::gloo::Context*> carried;
  for (const KindHandle& kind : context.kinds()) {
    if (!context.is_member(kind)) continue;
    const std::shared_ptr<::gloo::Context> group = context.get_group(kind).gloo();
    if (carried.insert(group.get()).second) (void)gloo::all_gather(group, context.global_rank());
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  context.destroy();
  return slowest(bootstrap, elapsed, timeout);
}

std::string bench_text(const std::vector<GlooEntry>& entries, const Layout& layout, std::string_view bootstrap,
                       int repeats) {
  const double floor = entries.back().median();
  std::string out = fmt::format("pgroups bench: {} on the {} bootstrap, backend gloo; {} repeats after a warm-up\n",
                                describe(layout.config()), bootstrap, repeats);
  out += fmt::format("{:<10} {:<60} {:>9} {:>11} {:>10}\n", "entry", "call", "min (ms)", "median (ms)", "/ exchange");
  for (const GlooEntry& entry : entries) {
    out += fmt::format("{:<10} {:<60} {:>9.3f} {:>11.3f} {:>9.2f}x\n", entry.name, entry.call,
                       *std::min_element(entry.seconds.begin(), entry.seconds.end()) * 1e3, entry.median() * 1e3,
                       entry.median() / floor);
  }
  return out;
}

int bench_job(const BenchOnBootstrap& job, Bootstrap& bootstrap, ContextOptions& base) {
  const int rank = bootstrap.rank();
  const std::chrono::milliseconds timeout = job.mpi->in_effect;
  std::optional<ParallelConfig> config;
  std::optional<LocalFailure> failure;
  try {
    if (job.repeats < 1) {
      throw ConfigError(fmt::format("--repeats {} is invalid: at least one repeat is needed", job.repeats));
    }
    config = job.plan->resolve(bootstrap.size());
    validate(*config);
    base.backend = Backend::gloo;
    require_backend_built(base.backend);
    base.agreed_settings = fmt::format("bench repeats={} format={}", job.repeats, job.format);
    job.mpi->apply(base, *config, rank, bootstrap.size());
  } catch (const std::exception& error) {
    failure = LocalFailure{exit_status_of(error), error.what()};
  }
  if (auto status = settle_on(bootstrap, failure, timeout)) return *status;

  std::vector<GlooEntry> entries = {{"gloo", "ParallelContext on the bootstrap, one all-gather per group", {}},
                                    {"no_share", "the same, sharing off", {}},
                                    {"exchange", "3 x the bootstrap's all-gather", {}}};
  try {
    for (int repeat = -1; repeat < job.repeats; ++repeat) {
      for (GlooEntry& entry : entries) {
        if (base.before_step) base.before_step("measure");
        const double seconds = measure(entry, bootstrap, *config, base);
        if (repeat >= 0) entry.seconds.push_back(seconds);
      }
    }
  } catch (const std::exception& error) {
    return end_step_on_bootstrap(rank, error);
  }
  if (rank == 0) {
    const Layout layout(*config);
    const std::string_view kind = bootstrap_name(bootstrap.kind());
    if (job.format == "json") {
      nlohmann::json report = {{"schema_version", report::kSchemaVersion},
                               {"backend", "gloo"},
                               {"bootstrap", kind},
                               {"world_size", layout.world_size()},
                               {"repeats", job.repeats}};
      for (const GlooEntry& entry : entries) report["entries"][entry.name] = {{"median_s", entry.median()}};
      write_output(report.dump() + '\n');
    } else {
      write_output(bench_text(entries, layout, kind, job.repeats));
    }
  }
  bootstrap.barrier(timeout, "the end of the job");
  return 0;
}

}  // namespace

int run_bench_on_bootstrap(const BenchOnBootstrap& job) {
  return run_on_bootstrap(job.bootstrap, job.mpi->in_effect, [&job](Bootstrap& bootstrap, ContextOptions& base) {
    return bench_job(job, bootstrap, base);
  });
}

}  // namespace pgroups::cli
