#include "pgroups/launch/launcher.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "pgroups/common/environment.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups {
namespace {

std::optional<std::int64_t> to_count(std::string_view text) { return parse_environment_count(text); }

// The variable each launcher uses for each field; empty where it has none. Innermost
// launcher first: torchrun's workers may run inside an mpirun or srun launch, and
// mpirun's ranks inside a Slurm step (mpirun's daemons are one).
constexpr std::array<LauncherVariables, 4> kNames = {{
    {Launcher::torchrun, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
     "LOCAL_RANK"},
    {Launcher::open_mpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", "", "", ""},
    {Launcher::mpich_hydra, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "", "", ""},
    {Launcher::slurm, "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "", "SLURM_NODEID",
     "SLURM_STEP_NUM_NODES", "SLURM_STEP_ID"},
}};

// Two values that cannot both hold say nothing about which one is wrong: both become
// unknown, so that no caller (the refusal of a non-MPI command, a node count) acts on a
// guess.
void drop_unless_below(std::optional<std::int64_t>& low, std::optional<std::int64_t>& high) {
  if (low && high && *low >= *high) {
    low.reset();
    high.reset();
  }
}

void drop_contradictions(LauncherInfo& info) {
  const std::optional<std::int64_t> world = info.world_size;
  bool world_known = true;
  if (info.local_size && world && *info.local_size > *world) {
    world_known = false;
    info.local_size.reset();
    info.local_rank.reset();
  }
  if (info.nodes && world && *info.nodes > *world) {
    world_known = false;
    info.nodes.reset();
    info.node.reset();
  }
  if (!world_known) info.world_size.reset();
  drop_unless_below(info.rank, info.world_size);
  drop_unless_below(info.local_rank, info.local_size);
  drop_unless_below(info.node, info.nodes);
}

}  // namespace

std::span<const LauncherVariables> launcher_variables() noexcept { return kNames; }

std::string_view launcher_name(Launcher launcher) noexcept {
  constexpr std::array<std::string_view, 5> names = {"none", "open_mpi", "mpich_hydra", "slurm", "torchrun"};
  return names[static_cast<std::size_t>(launcher)];
}

std::optional<std::int64_t> LauncherInfo::node_count() const {
  if (nodes) return nodes;
  if (world_size && local_size && *local_size > 0 && *world_size % *local_size == 0) return *world_size / *local_size;
  return std::nullopt;
}

std::optional<std::int64_t> slurm_tasks_on_node(std::string_view list, std::int64_t node) {
  // Entries "N" or "N(xK)", comma-separated: K nodes of N tasks each.
  std::int64_t first = 0;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view entry = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    std::int64_t repeat = 1;
    if (const std::size_t paren = entry.find("(x"); paren != std::string_view::npos) {
      if (entry.back() != ')') return std::nullopt;
      const auto times = to_count(entry.substr(paren + 2, entry.size() - paren - 3));
      if (!times) return std::nullopt;
      repeat = *times;
      entry = entry.substr(0, paren);
    }
    const auto tasks = to_count(entry);
    if (!tasks) return std::nullopt;
    if (node >= first && node < first + repeat) return tasks;
    first += repeat;
  }
  return std::nullopt;
}

LauncherInfo detect_launcher(const EnvironmentLookup& lookup) {
  LauncherInfo info;
  info.topology_address = environment_text(lookup, "SLURM_TOPOLOGY_ADDR");
  info.topology_pattern = environment_text(lookup, "SLURM_TOPOLOGY_ADDR_PATTERN");
  if (!info.topology_address || !info.topology_pattern) info.topology_address = info.topology_pattern = std::nullopt;
  bool keep_problems = false;
  auto read = [&](std::string_view name) -> std::optional<std::int64_t> {
    EnvironmentCount count = environment_count(lookup, name);
    if (keep_problems && count.malformed()) info.malformed.push_back(std::move(count.problem));
    return count.value;
  };
  for (const LauncherVariables& names : kNames) {
    // A launcher is present when it gave this process a rank, and, where that variable
    // alone does not say so, its launch variable too: many programs set RANK on their
    // own, and a Slurm batch script has SLURM_PROCID=0 but runs no step.
    const bool present = read(names.rank).has_value() && (names.launch.empty() || read(names.launch).has_value());
    if (!present) continue;
    if (info.launcher != Launcher::none) {
      info.also_present.push_back(names.launcher);
      continue;
    }
    info.launcher = names.launcher;
    keep_problems = true;
    info.rank = read(names.rank);
    info.world_size = read(names.world_size);
    info.local_rank = read(names.local_rank);
    info.local_size = read(names.local_size);
    info.node = read(names.node);
    info.nodes = read(names.nodes);
    if (names.launcher == Launcher::slurm && info.node) {
      constexpr std::string_view kTasksPerNode = "SLURM_STEP_TASKS_PER_NODE";
      if (const auto tasks_per_node = environment_text(lookup, kTasksPerNode)) {
        info.local_size = slurm_tasks_on_node(*tasks_per_node, *info.node);
        if (!info.local_size) {
          info.malformed.push_back(
              fmt::format("environment variable {}={} is malformed for node {}: it must be a list "
                          "of counts \"N\" or \"N(xK)\" that covers the node",
                          kTasksPerNode, quoted_excerpt(*tasks_per_node), *info.node));
        }
      }
    }
    keep_problems = false;
    drop_contradictions(info);
  }
  return info;
}

LauncherInfo detect_launcher() { return detect_launcher(process_environment); }

}  // namespace pgroups
