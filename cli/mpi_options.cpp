#include "mpi_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

#include "../src/common/printable.hpp"
#include "integer_option.hpp"
#include "pgroups/error.hpp"
#include "pgroups/layout.hpp"
#include "pgroups/timeout.hpp"

namespace pgroups::cli {
namespace {

constexpr const char* kFaultGroup = "Fault injection (testing)";

// The steps of ParallelContext's construction for `config`, in order (the names
// ContextOptions::before_step receives).
std::vector<std::string> creation_steps(const ParallelConfig& config, Backend backend) {
  std::vector<std::string> steps = {"duplicate", "agreement", "node"};
  if (backend == Backend::nccl) steps.emplace_back("device");
  const Layout layout(config);
  for (ParallelMode mode : layout.modes()) {
    if (mode != ParallelMode::global) steps.emplace_back(mode_name(mode));
  }
  if (backend == Backend::nccl) steps.emplace_back("nccl");
  return steps;
}

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

void MpiOptions::add_to(CLI::App& app, bool fault_injection) {
  app.add_option("--timeout", timeout,
                 "Seconds that group creation may wait for the other ranks before the job ends with status 8 "
                 "(0 = no timeout; default: $PGROUPS_TIMEOUT, else 300)")
      ->type_name("SECONDS")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              // CLI11 puts the option's name in front of the message.
              static_cast<void>(parse_timeout_seconds(text, "value"));
              return {};
            } catch (const ConfigError& error) {
              return error.what();
            }
          },
          ""));
  if (!fault_injection) return;
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
                     "first mode was created",
                     kFirstRank)
      ->type_name("R")
      ->group(kFaultGroup);
  app.add_option("--inject-step", step,
                 "Testing: the creation step before which the injected fault strikes: duplicate, agreement, node, "
                 "a mode name (data, tensor, ...), or with --backend nccl device or nccl")
      ->type_name("STEP")
      ->group(kFaultGroup);
}

void MpiOptions::apply(ContextOptions& options, const ParallelConfig& config, int rank, int size) const {
  options.timeout = resolve_timeout(timeout ? std::optional(parse_timeout_seconds(*timeout, "--timeout"))
                                            : std::nullopt);
  if (!stall_rank && !exit_rank) {
    if (!step.empty()) throw ConfigError("--inject-step needs --inject-stall-rank or --inject-exit-rank");
    return;
  }
  if (stall_rank) check_rank("--inject-stall-rank", *stall_rank, size);
  if (exit_rank) check_rank("--inject-exit-rank", *exit_rank, size);
  if (stall_rank && exit_rank && *stall_rank == *exit_rank) {
    throw ConfigError(fmt::format("rank {} cannot both stall and exit: give --inject-stall-rank and "
                                  "--inject-exit-rank different ranks",
                                  *stall_rank));
  }
  const std::vector<std::string> steps = creation_steps(config, options.backend);
  if (!step.empty() && std::find(steps.begin(), steps.end(), step) == steps.end()) {
    throw ConfigError(fmt::format("--inject-step {} is not a step of creating {}: the steps are {}",
                                  detail::quoted_excerpt(step), describe(config), fmt::join(steps, ", ")));
  }
  // The exit's default is the step after the first mode (`global`, made by "duplicate")
  // was created: the first of the other modes, so that the rank dies half-way.
  const auto first_mode = std::find_if(steps.begin(), steps.end(), [](const std::string& s) {
    return s != "duplicate" && s != "agreement" && s != "node" && s != "device";
  });
  const std::string exit_default = first_mode != steps.end() ? *first_mode : std::string("node");
  const std::string at = !step.empty() ? step : stall_rank == rank ? std::string("duplicate") : exit_default;

  if (stall_rank == rank) {
    options.before_step = [at, rank](std::string_view current) {
      if (current != at) return;
      announce_fault(fmt::format("pgroups: injected fault: rank {} stalls before step '{}' (--inject-stall-rank)\n",
                                 rank, at));
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
