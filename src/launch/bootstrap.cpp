#include "pgroups/launch/bootstrap.hpp"

#include <fmt/format.h>

#include <array>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/launch/env_launch.hpp"
#include "pgroups/launch/pmix_bootstrap.hpp"

namespace pgroups {
namespace {

constexpr std::array<BootstrapKind, 4> kBootstraps = {BootstrapKind::automatic, BootstrapKind::mpi, BootstrapKind::pmix,
                                                      BootstrapKind::env};

}  // namespace

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
  throw ConfigError(fmt::format("bootstrap {} is unknown: it is one of auto, mpi, pmix, env", quoted_excerpt(text)));
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
        "callbacks, never chosen; choose one of auto, mpi, pmix, env");
  }
  if (requested != BootstrapKind::automatic) {
    if (!bootstrap_built(requested)) {
      throw ConfigError(
          fmt::format("bootstrap {} is not built into this pgroups (configure again with it: "
                      "libpmix-dev installed for pmix, -DPGROUPS_WITH_MPI=ON for mpi)",
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
  if (env_launched && !pmix_launched) {
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
    case BootstrapKind::mpi:
#ifdef PGROUPS_LAUNCH_WITH_MPI
      return true;
#else
      return false;
#endif
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
