// Layout microbenchmarks. Each figure is printed beside a baseline measured in the same
// process: the baseline answers the same question the way Colossal-AI's initializers
// do, by walking every group of the mode until it finds the rank's.

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "pgroups/layout/layout.hpp"

namespace {

using pgroups::Layout;
using pgroups::ParallelConfig;
using pgroups::ParallelMode;
using pgroups::TensorMode;

// Three shapes that between them create every mode.
ParallelConfig shape(int index, std::int64_t world_size) {
  ParallelConfig c;
  c.world_size = world_size;
  c.pipeline = 16;
  switch (index) {
    case 0:
      c.tensor_size = 64;
      c.tensor_mode = TensorMode::tensor_3d;
      break;
    case 1:
      c.tensor_size = 32;
      c.tensor_mode = TensorMode::tensor_2p5d;
      c.depth = 2;
      break;
    default:
      c.tensor_size = 16;
      c.tensor_mode = TensorMode::sequence;
      break;
  }
  return c;
}

const char* shape_name(int index) { return index == 0 ? "3d" : index == 1 ? "2.5d" : "sequence"; }

// What `explain` computes for one rank: coordinates and, per mode, local rank, size,
// group index and the first and last members.
void BM_RankPicture(benchmark::State& state) {
  const Layout layout(shape(static_cast<int>(state.range(1)), std::int64_t{1} << state.range(0)));
  std::int64_t rank = layout.world_size() / 3;
  for (auto _ : state) {
    benchmark::DoNotOptimize(layout.coordinates(rank));
    for (ParallelMode mode : layout.modes()) {
      const std::int64_t size = layout.group_size(mode);
      benchmark::DoNotOptimize(layout.local_rank(rank, mode));
      benchmark::DoNotOptimize(layout.group_index(rank, mode));
      benchmark::DoNotOptimize(layout.group_member(rank, mode, 0));
      benchmark::DoNotOptimize(layout.group_member(rank, mode, size - 1));
    }
    rank = (rank * 7 + 1) % layout.world_size();
  }
  state.SetLabel(fmt::format("W=2^{} {} ({} modes)", state.range(0), shape_name(static_cast<int>(state.range(1))),
                             layout.modes().size()));
}
BENCHMARK(BM_RankPicture)->ArgsProduct({{20, 30}, {0, 1, 2}});

// One rank's group in one mode, in full: O(group size).
void BM_GroupOf(benchmark::State& state) {
  const Layout layout(shape(0, std::int64_t{1} << state.range(0)));
  const auto mode = static_cast<ParallelMode>(state.range(1));
  std::int64_t rank = layout.world_size() / 3;
  for (auto _ : state) {
    benchmark::DoNotOptimize(layout.group_of(rank, mode));
    rank = (rank * 7 + 1) % layout.world_size();
  }
  state.SetLabel(fmt::format("W=2^{} {} (size {})", state.range(0), pgroups::mode_name(mode), layout.group_size(mode)));
}
BENCHMARK(BM_GroupOf)
    ->ArgsProduct({{20, 30},
                   {static_cast<long>(ParallelMode::tensor), static_cast<long>(ParallelMode::pipe),
                    static_cast<long>(ParallelMode::tensor_3d_input_x_weight)}});

// Every group of every mode, as `plan --format json` enumerates them.
void BM_PlanEnumeration(benchmark::State& state) {
  const Layout layout(shape(static_cast<int>(state.range(1)), state.range(0)));
  for (auto _ : state) {
    for (ParallelMode mode : layout.modes()) benchmark::DoNotOptimize(layout.groups(mode));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0) * static_cast<std::int64_t>(layout.modes().size()));
  state.SetLabel(fmt::format("W={} {}", state.range(0), shape_name(static_cast<int>(state.range(1)))));
}
BENCHMARK(BM_PlanEnumeration)->ArgsProduct({{65536}, {0, 1, 2}})->Unit(benchmark::kMillisecond);

// Baseline: what every rank does in Colossal-AI's initializers, building every group of
// every mode in turn and keeping the one that holds the rank.
void BM_BaselineScanForRank(benchmark::State& state) {
  const Layout layout(shape(static_cast<int>(state.range(1)), state.range(0)));
  std::int64_t rank = layout.world_size() / 3;
  for (auto _ : state) {
    for (ParallelMode mode : layout.modes()) {
      for (const auto& group : layout.groups(mode)) {
        if (std::find(group.begin(), group.end(), rank) != group.end()) {
          benchmark::DoNotOptimize(group.data());
          break;
        }
      }
    }
    rank = (rank * 7 + 1) % layout.world_size();
  }
  state.SetLabel(fmt::format("W={} {}", state.range(0), shape_name(static_cast<int>(state.range(1)))));
}
BENCHMARK(BM_BaselineScanForRank)->ArgsProduct({{65536}, {0, 1, 2}})->Unit(benchmark::kMillisecond);

// One rank's full group in every mode, the global one (W members) included.
void BM_RankGroupsEveryMode(benchmark::State& state) {
  const Layout layout(shape(static_cast<int>(state.range(1)), state.range(0)));
  std::int64_t rank = layout.world_size() / 3;
  for (auto _ : state) {
    for (ParallelMode mode : layout.modes()) benchmark::DoNotOptimize(layout.group_of(rank, mode));
    rank = (rank * 7 + 1) % layout.world_size();
  }
  state.SetLabel(fmt::format("W={} {}", state.range(0), shape_name(static_cast<int>(state.range(1)))));
}
BENCHMARK(BM_RankGroupsEveryMode)->ArgsProduct({{65536}, {0, 1, 2}})->Unit(benchmark::kMicrosecond);

// Collects each run's time so that main can print ratios against the baseline.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration)
        seconds_[run.benchmark_name()] = run.GetAdjustedRealTime() * unit(run.time_unit);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void print_ratios() const {
    fmt::print(
        "\nOne rank's groups in every mode at W=65536, baseline (build every group, keep the own one) / pgroups "
        "(direct):\n");
    for (int s = 0; s < 3; ++s) {
      const std::string suffix = fmt::format("/65536/{}", s);
      const auto base = seconds_.find("BM_BaselineScanForRank" + suffix);
      const auto ours = seconds_.find("BM_RankGroupsEveryMode" + suffix);
      if (base == seconds_.end() || ours == seconds_.end()) continue;
      fmt::print("  {:<9} baseline {:>10.2f} us   pgroups {:>8.3f} us   ratio {:>8.0f}x\n", shape_name(s),
                 base->second * 1e6, ours->second * 1e6, base->second / ours->second);
    }
  }

 private:
  static double unit(benchmark::TimeUnit u) {
    switch (u) {
      case benchmark::kNanosecond: return 1e-9;
      case benchmark::kMicrosecond: return 1e-6;
      case benchmark::kMillisecond: return 1e-3;
      default: return 1.0;
    }
  }
  std::map<std::string, double> seconds_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}
