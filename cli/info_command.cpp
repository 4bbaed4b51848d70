// `pgroups info`: what this build of pgroups is and what it can reach here: its version,
// build type and compiler, the backends compiled in with the versions of their
// libraries (the one compiled against and the one loaded), the CUDA runtime and driver,
// and the GPUs this process sees. It runs without mpirun: MPI is asked only what MPI-3
// allows before MPI_Init (MPI_Get_library_version, MPI_Get_version), and never
// initialised. Nothing here fails for a missing GPU, driver or library; each part that
// cannot be told says so. Run under a launcher (mpirun, srun, torchrun), it also says
// where this process runs: its host and what the launcher's variables tell
// (pgroups/launch/launcher.hpp); `verify` counts the nodes of a whole job.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "output.hpp"
#include "pgroups/common/environment.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/launch/launcher.hpp"
#include "print_warnings.hpp"
#include "subcommand.hpp"

#include <unistd.h>

#ifdef PGROUPS_INFO_WITH_MPI
#include "pgroups/mpi/version.hpp"
#endif
#ifdef PGROUPS_HAVE_NCCL
#include "pgroups/nccl/device.hpp"
#include "pgroups/nccl/version.hpp"
#endif

namespace pgroups::cli {
namespace {

struct MpiInfo {
  std::string library;   // first line of MPI_Get_library_version
  bool ulfm = false;     // MPIX_Comm_shrink compiled in
  std::string standard;  // "3.1"
};

struct NcclInfo {
  std::string runtime;  // ncclGetVersion, or "unknown (...)"
  std::string compiled;
  bool split = false;
};

struct CudaInfo {
  std::string runtime;  // empty: unknown
  std::string driver;   // empty: no driver
  int visible_gpus = 0;
};

struct BuildInfo {
  std::string version = PGROUPS_VERSION;
  std::string build_type = PGROUPS_BUILD_TYPE;
  std::string compiler = PGROUPS_CXX_COMPILER;
  std::optional<MpiInfo> mpi;    // absent: not built
  std::optional<NcclInfo> nccl;  // absent: not built
  bool gloo = false;             // built (gloo's library has no version to ask)
  std::optional<CudaInfo> cuda;  // absent: built without CUDA
  std::string host;
  LauncherInfo launcher;
  std::vector<BootstrapKind> bootstraps = built_bootstraps();
  std::string bootstrap;  // the one this process would use, or why none
};

// A library that fails to answer is reported, not fatal: `info` is what one runs to
// find out what is wrong.
template <typename Query>
std::string ask(Query&& query) {
  try {
    return query();
  } catch (const std::exception& error) {
    return fmt::format("unknown ({})", error.what());
  }
}

BuildInfo gather() {
  BuildInfo info;
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) == 0) info.host = host.data();
  info.launcher = detect_launcher();
  info.bootstrap =
      ask([] { return std::string(bootstrap_name(choose_bootstrap(BootstrapKind::automatic, process_environment))); });
#ifdef PGROUPS_INFO_WITH_MPI
  info.mpi = MpiInfo{ask(mpi::library_version), mpi::has_ulfm(), ask(mpi::standard_version)};
#endif
#ifdef PGROUPS_INFO_WITH_GLOO
  info.gloo = true;
#endif
#ifdef PGROUPS_HAVE_NCCL
  info.nccl = NcclInfo{ask(nccl::nccl_version), nccl::nccl_compile_version(), nccl::split_available()};
  info.cuda = CudaInfo{nccl::cuda_runtime_version(), nccl::cuda_driver_version(), nccl::visible_gpu_count()};
#endif
  return info;
}

nlohmann::json or_null(const std::string& text) { return text.empty() ? nlohmann::json() : nlohmann::json(text); }

nlohmann::json optional_json(const std::optional<std::int64_t>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

// "built": the bootstraps built in; "this_process": the one it would use, or why none.
nlohmann::json bootstraps_json(const BuildInfo& info) {
  nlohmann::json built = nlohmann::json::array();
  for (const BootstrapKind kind : info.bootstraps) built.push_back(bootstrap_name(kind));
  return {{"built", std::move(built)}, {"this_process", info.bootstrap}};
}

nlohmann::json launcher_json(const LauncherInfo& launcher) {
  nlohmann::json also = nlohmann::json::array();
  for (Launcher other : launcher.also_present) also.push_back(launcher_name(other));
  return {{"name", launcher_name(launcher.launcher)},
          {"rank", optional_json(launcher.rank)},
          {"world_size", optional_json(launcher.world_size)},
          {"local_rank", optional_json(launcher.local_rank)},
          {"local_size", optional_json(launcher.local_size)},
          {"node", optional_json(launcher.node)},
          {"nodes", optional_json(launcher.node_count())},
          {"also_present", std::move(also)},
          {"malformed", launcher.malformed}};
}

std::string launcher_text(const LauncherInfo& launcher) {
  if (launcher.launcher == Launcher::none) return "none (not started by mpirun, srun or torchrun)";
  auto of = [](const std::optional<std::int64_t>& index, const std::optional<std::int64_t>& count) {
    return fmt::format("{} of {}", index ? std::to_string(*index) : "?", count ? std::to_string(*count) : "?");
  };
  std::string text = fmt::format("{}: rank {}, local rank {}, node {}", launcher_name(launcher.launcher),
                                 of(launcher.rank, launcher.world_size), of(launcher.local_rank, launcher.local_size),
                                 of(launcher.node, launcher.node_count()));
  for (Launcher other : launcher.also_present) text += fmt::format("; {} variables also set", launcher_name(other));
  return text;
}

nlohmann::json info_json(const BuildInfo& info) {
  nlohmann::json mpi = {{"built", info.mpi.has_value()}};
  if (info.mpi) {
    mpi["library"] = info.mpi->library;
    mpi["standard"] = info.mpi->standard;
    mpi["ulfm"] = info.mpi->ulfm;
  }
  nlohmann::json nccl = {{"built", info.nccl.has_value()}};
  if (info.nccl) {
    nccl["version"] = info.nccl->runtime;
    nccl["compile_version"] = info.nccl->compiled;
    nccl["split"] = info.nccl->split;
  }
  nlohmann::json cuda;  // null when built without CUDA
  if (info.cuda) cuda = {{"runtime", or_null(info.cuda->runtime)}, {"driver", or_null(info.cuda->driver)}};
  return {{"version", info.version},
          {"build_type", info.build_type},
          {"compiler", info.compiler},
          {"backends", {{"mpi", std::move(mpi)}, {"nccl", std::move(nccl)}, {"gloo", {{"built", info.gloo}}}}},
          {"cuda", std::move(cuda)},
          {"visible_gpus", info.cuda ? nlohmann::json(info.cuda->visible_gpus) : nlohmann::json()},
          {"host", info.host},
          {"launcher", launcher_json(info.launcher)},
          {"bootstraps", bootstraps_json(info)}};
}

std::string info_text(const BuildInfo& info) {
  std::string out = fmt::format("pgroups {}\n", info.version);
  out += fmt::format("  {:<10} {}, {}\n", "build:", info.build_type, info.compiler);
  std::vector<std::string_view> built_backends;
  if (info.mpi) built_backends.emplace_back("mpi");
  if (info.nccl) built_backends.emplace_back("nccl");
  if (info.gloo) built_backends.emplace_back("gloo");
  const std::string backends = fmt::format("{}", fmt::join(built_backends, ", "));
  out += fmt::format("  {:<10} {}\n",
                     "backends:", backends.empty() ? "none (the plan and explain commands only)" : backends);
  out += fmt::format("  {:<10} {}\n", "mpi:",
                     info.mpi
                         ? fmt::format("{} (MPI {}; ULFM MPIX_Comm_shrink {})", info.mpi->library, info.mpi->standard,
                                       info.mpi->ulfm ? "yes" : "no: a lost rank ends the job, see pgroups plan --lost")
                         : std::string("not built (configure with -DPGROUPS_WITH_MPI=ON)"));
  out += fmt::format(
      "  {:<10} {}\n", "nccl:",
      info.nccl
          ? fmt::format("{} (compiled against {}; ncclCommSplit {})", info.nccl->runtime, info.nccl->compiled,
                        info.nccl->split ? "yes" : "no")
          : std::string(
                "not built (install NCCL with scripts/install-nccl.sh, then configure with -DPGROUPS_WITH_NCCL=ON)"));
  out += fmt::format("  {:<10} {}\n", "gloo:",
                     info.gloo ? "built (CPU groups over TCP, on every bootstrap)"
                               : "not built (install libgloo-dev, then configure with -DPGROUPS_WITH_GLOO=ON)");
  if (info.cuda) {
    out += fmt::format("  {:<10} runtime {}, driver {}\n",
                       "cuda:", info.cuda->runtime.empty() ? "unknown" : info.cuda->runtime,
                       info.cuda->driver.empty() ? "none" : info.cuda->driver);
    out += fmt::format("  {:<10} {} visible\n", "gpus:", info.cuda->visible_gpus);
  } else {
    out += fmt::format("  {:<10} not built (the CUDA toolkit comes with the NCCL backend)\n", "cuda:");
    out += fmt::format("  {:<10} not queried (no CUDA)\n", "gpus:");
  }
  out += fmt::format("  {:<10} {}\n", "host:", info.host);
  out += fmt::format("  {:<10} {}\n", "launcher:", launcher_text(info.launcher));
  std::vector<std::string_view> built;
  for (const BootstrapKind kind : info.bootstraps) built.push_back(bootstrap_name(kind));
  out += fmt::format("  {:<10} {} built; this process: {}\n",
                     "bootstrap:", built.empty() ? std::string("none") : fmt::format("{}", fmt::join(built, ", ")),
                     info.bootstrap);
  return out;
}

}  // namespace

Subcommand add_info_command(CLI::App& parent) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* app = parent.add_subcommand(
      "info", "Show the version, build, backends (MPI, NCCL, gloo) with their library versions, CUDA and visible GPUs");
  app->add_option("--format", *format, "Output format")->check(CLI::IsMember({"text", "json"}));
  return {app, [format] {
            const BuildInfo info = gather();
            if (*format == "json") {
              write_output(info_json(info).dump(1) + '\n');
            } else {
              write_output(info_text(info));
            }
            // Read as unknown (docs/reference/topology.md, "Launcher variables"), and said, in the
            // words nccl::choose_device refuses the same value with.
            print_warnings(info.launcher.malformed);
            return 0;
          }};
}

}  // namespace pgroups::cli
