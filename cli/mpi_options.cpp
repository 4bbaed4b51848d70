#include "mpi_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "integer_option.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/context/creation_steps.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups::cli {
namespace {

constexpr const char* kFaultGroup = "Fault injection (testing)";

void check_rank(const char* flag, int rank, int size) {
  if (rank < 0 || rank >= size) {
    throw ConfigError(fmt::format("{} {} is outside the world: the ranks are 0 to {}", flag, rank, size - 1));
  }
}

// Flushed before the fault, so that the line is not lost with the process.
void announce_fault(const std::string& text) {
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace

void MpiOptions::add_to(CLI::App& app, std::vector<std::string> steps_after_creation) {
  command_ = app.get_name();
  later_steps_ = std::move(steps_after_creation);
  app.add_option("--timeout")
      ->description(fmt::format("Seconds that each step (group creation, then each later phase: checks, repeats, "
                                "finalize) may wait for the other ranks before the job ends with status 8 (0 = no "
                                "timeout; default: ${}, else {}). May differ between ranks: each waits for its own",
                                kTimeoutEnvironmentVariable, std::chrono::duration<double>(kDefaultTimeout).count()))
      ->type_name("SECONDS")
      ->check(CLI::Validator(
          [this](std::string& text) -> std::string {
            try {
              // Parsed here, once; CLI11 puts the option's name in front of the message.
              timeout = parse_timeout_seconds(text, "value");
              return {};
            } catch (const ConfigError& error) {
              return error.what();
            }
          },
          ""));
  // A rank is 0 or more; one past the world is a ConfigError of apply(), which knows it.
  constexpr std::int64_t kFirstRank = 0;
  add_integer_option(app, "--inject-stall-rank", stall_rank,
                     "Testing: rank R stops (sleeps until killed) just before --inject-step, by default just before "
                     "group creation",
                     kFirstRank)
      ->type_name("R")
      ->group(kFaultGroup);
  add_integer_option(app, "--inject-exit-rank", exit_rank,
                     "Testing: rank R exits at once with status 1 just before --inject-step, by default after the "
                     "first kind was created",
                     kFirstRank)
      ->type_name("R")
      ->group(kFaultGroup);
  app.add_option("--inject-step", step,
                 fmt::format("Testing: the step before which the injected fault strikes: a step of creation "
                             "(duplicate, agreement, node, a group kind such as data, tensor or tp-dp, with "
                             "--backend nccl device and nccl), or one after it ({})",
                             fmt::join(later_steps_, ", ")))
      ->type_name("STEP")
      ->group(kFaultGroup);
}

void MpiOptions::resolve() { in_effect = resolve_timeout(timeout); }

void MpiOptions::apply(ContextOptions& options, const ParallelConfig& config, int rank, int size) const {
  options.timeout = in_effect;
  if (!stall_rank && !exit_rank) {
    if (!step.empty()) throw ConfigError("--inject-step needs --inject-stall-rank or --inject-exit-rank");
    return;
  }
  if (stall_rank) check_rank("--inject-stall-rank", *stall_rank, size);
  if (exit_rank) check_rank("--inject-exit-rank", *exit_rank, size);
  if (stall_rank && exit_rank && *stall_rank == *exit_rank) {
    throw ConfigError(
        fmt::format("rank {} cannot both stall and exit: give --inject-stall-rank and "
                    "--inject-exit-rank different ranks",
                    *stall_rank));
  }
  // The context's own list of steps, so that every step it announces can be named here,
  // then the command's own phases after creation.
  const std::vector<CreationStep> steps = options.backend == Backend::gloo
                                              ? bootstrap_creation_steps(/*with_device=*/false, /*with_gloo=*/true)
                                              : creation_steps(Layout(config), options.backend == Backend::nccl);
  const std::vector<std::string>& later = later_steps_;
  if (!step.empty() && find_step(steps, step) == nullptr &&
      std::find(later.begin(), later.end(), step) == later.end()) {
    throw ConfigError(
        fmt::format("--inject-step {} is not a step of `pgroups {}` with {}: the steps of creation "
                    "are {}; after it {}",
                    quoted_excerpt(step), command_, describe(config), step_names(steps), fmt::join(later, ", ")));
  }
  // The exit's default is the first group kind's step (after `global`, made by
  // "duplicate"), so that the rank dies half-way; with gloo, the one connection step. A
  // stall's is the first step.
  const auto first_group = std::find_if(steps.begin(), steps.end(), [](const CreationStep& s) {
    return s.kind == StepKind::group || s.kind == StepKind::gloo;
  });
  const std::string exit_default = first_group != steps.end() ? first_group->name : std::string("node");
  const std::string at = !step.empty() ? step : stall_rank == rank ? steps.front().name : exit_default;

  if (stall_rank == rank) {
    options.before_step = [at, rank](std::string_view current) {
      if (current != at) return;
      announce_fault(
          fmt::format("pgroups: injected fault: rank {} stalls before step '{}' (--inject-stall-rank)\n", rank, at));
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    };
  } else if (exit_rank == rank) {
    options.before_step = [at, rank](std::string_view current) {
      if (current != at) return;
      announce_fault(fmt::format(
          "pgroups: injected fault: rank {} exits with status 1 before step '{}' (--inject-exit-rank)\n", rank, at));
      // _Exit: no destructors, no MPI_Finalize, as when a process is killed.
      std::_Exit(1);
    };
  }
}

}  // namespace pgroups::cli
