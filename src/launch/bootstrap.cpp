#include "pgroups/launch/bootstrap.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <map>
#include <mutex>
#include <utility>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/launch/env_bootstrap.hpp"
#include "pgroups/launch/env_launch.hpp"
#include "pgroups/launch/pmix_bootstrap.hpp"

namespace pgroups {
namespace {

constexpr std::array<BootstrapKind, 4> kBootstraps = {BootstrapKind::automatic, BootstrapKind::mpi, BootstrapKind::pmix,
                                                      BootstrapKind::env};

// The makers the rooms above registered, by kind.
struct Makers {
  std::mutex mutex;
  std::map<BootstrapKind, BootstrapMaker> by_kind;
};

Makers& makers() {
  static Makers registered;
  return registered;
}

BootstrapMaker registered_maker(BootstrapKind kind) {
  Makers& all = makers();
  const std::lock_guard lock(all.mutex);
  const auto found = all.by_kind.find(kind);
  return found == all.by_kind.end() ? BootstrapMaker() : found->second;
}

std::string names_text() { return fmt::format("{}", fmt::join(bootstrap_names(), ", ")); }

}  // namespace

std::vector<std::string> bootstrap_names() {
  std::vector<std::string> names;
  for (const BootstrapKind kind : kBootstraps) names.emplace_back(bootstrap_name(kind));
  return names;
}

void register_bootstrap_maker(BootstrapKind kind, BootstrapMaker maker) {
  Makers& all = makers();
  const std::lock_guard lock(all.mutex);
  all.by_kind[kind] = std::move(maker);
}

std::unique_ptr<Bootstrap> start_bootstrap(BootstrapKind requested, std::chrono::milliseconds timeout,
                                           const EnvironmentLookup& lookup) {
  const BootstrapKind kind = choose_bootstrap(requested, lookup);
  if (kind == BootstrapKind::pmix) return make_pmix_bootstrap(lookup);
  if (kind == BootstrapKind::env) return make_env_bootstrap(timeout, lookup);
  return registered_maker(kind)(timeout);  // choose_bootstrap answers only kinds that are built
}

std::string_view bootstrap_name(BootstrapKind kind) noexcept {
  switch (kind) {
    case BootstrapKind::automatic: return "auto";
    case BootstrapKind::mpi: return "mpi";
    case BootstrapKind::pmix: return "pmix";
    case BootstrapKind::env: return "env";
    case BootstrapKind::callback: return "callback";
  }
  return "auto";
}

BootstrapKind parse_bootstrap(std::string_view text) {
  for (const BootstrapKind kind : kBootstraps) {
    if (bootstrap_name(kind) == text) return kind;
  }
  throw ConfigError(fmt::format("bootstrap {} is unknown: it is one of {}", quoted_excerpt(text), names_text()));
}

std::vector<BootstrapKind> built_bootstraps() {
  std::vector<BootstrapKind> built;
  for (const BootstrapKind kind : kBootstraps) {
    if (kind != BootstrapKind::automatic && bootstrap_built(kind)) built.push_back(kind);
  }
  return built;
}

BootstrapKind choose_bootstrap(BootstrapKind requested, const EnvironmentLookup& lookup) {
  if (requested == BootstrapKind::callback) {
    throw ConfigError(
        "bootstrap callback is a program's own (make_callback_bootstrap): it is made with the program's "
        "callbacks, never chosen; choose one of " +
        names_text());
  }
  if (requested != BootstrapKind::automatic) {
    if (!bootstrap_built(requested)) {
      throw ConfigError(
          fmt::format("bootstrap {} is not built into this pgroups (configure again with it: "
                      "libpmix-dev installed for pmix, -DPGROUPS_WITH_MPI=ON for mpi, whose front doors register it)",
                      bootstrap_name(requested)));
    }
    return requested;
  }
  const bool pmix_launched = bootstrap_built(BootstrapKind::pmix) && pmix_server_present(lookup);
  // An environment launch with no PMIx server: torchrun, a Kubernetes operator or a launch
  // by hand, where MPI would start as a world of one process. Its variables are checked
  // here, by the reader the env bootstrap uses, so that auto never chooses what the
  // bootstrap then refuses.
  const bool env_launched = is_env_launch(lookup);
  // torchrun's workers inherit the PMIx and MPI variables of a torchrun that srun or
  // mpirun started: they name the agent's process, and torchrun, the innermost launcher,
  // is this process's.
  if (env_launched && (!pmix_launched || is_torchrun_worker(lookup))) {
    (void)read_env_launch(lookup);
    return BootstrapKind::env;
  }
  if (!env_launched && !pmix_launched && environment_text(lookup, "RANK") && environment_text(lookup, "MASTER_ADDR")) {
    std::string missing;
    for (const char* name : kEnvLaunchVariables) {
      if (!environment_text(lookup, name)) missing += (missing.empty() ? "" : ", ") + std::string(name);
    }
    throw ConfigError(
        fmt::format("RANK and MASTER_ADDR are set, as in an environment launch, but {} {} not: an "
                    "environment launch gives RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT",
                    missing, missing.find(',') == std::string::npos ? "is" : "are"));
  }
  if (bootstrap_built(BootstrapKind::mpi)) return BootstrapKind::mpi;
  if (pmix_launched) return BootstrapKind::pmix;
  if (env_launched) return BootstrapKind::env;
  throw ConfigError(
      "no bootstrap applies to this process: pgroups was built without MPI, no PMIx server launched it, and "
      "it is no environment launch (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; start it with torchrun, srun "
      "--mpi=pmix or mpirun)");
}

bool bootstrap_built(BootstrapKind kind) noexcept {
  switch (kind) {
    case BootstrapKind::automatic:
    case BootstrapKind::env:
    case BootstrapKind::callback: return true;
    case BootstrapKind::mpi: return static_cast<bool>(registered_maker(kind));
    case BootstrapKind::pmix:
#ifdef PGROUPS_LAUNCH_WITH_PMIX
      return true;
#else
      return false;
#endif
  }
  return false;
}

}  // namespace pgroups
