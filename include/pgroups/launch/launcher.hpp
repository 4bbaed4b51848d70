#pragma once
/// \file
/// What the launcher told this process about where it runs, read from the environment
/// variables each launcher sets for the processes it launches (docs/reference/topology.md lists
/// them), innermost launcher first:
///
///   torchrun            RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
///                       GROUP_WORLD_SIZE (present only with LOCAL_RANK beside RANK)
///   Open MPI (mpirun)   OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE
///   MPICH / Hydra       PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS
///   Slurm (srun)        SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, SLURM_NODEID,
///                       SLURM_STEP_NUM_NODES, SLURM_STEP_TASKS_PER_NODE (present only
///                       with SLURM_STEP_ID, which srun sets for the tasks of a step)
///
/// Only a launch counts: a Slurm batch script (sbatch, one process) has SLURM_PROCID=0
/// and the allocation's SLURM_NTASKS, but no step, so it is no launch of several ranks.
/// When several are present the innermost wins, in the order above: a torchrun worker
/// started by srun or mpirun is torchrun's, and mpirun's ranks inside a Slurm step (its
/// daemons are one) are mpirun's, whose variables describe them. Pure: no MPI.
///
/// This is the one list of launcher variables in pgroups (launcher_variables()); every
/// value of it is read through the environment reader of pgroups::common
/// (pgroups/common/environment.hpp, environment_count), by one rule: the CLI, the node
/// query (mpi::node_info_from_launcher), the choice of a GPU (nccl::choose_device) and
/// Python (pgroups.torch) give the same answer for the same malformed value.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/common/environment.hpp"

namespace pgroups {

enum class Launcher : std::uint8_t { none, open_mpi, mpich_hydra, slurm, torchrun };

/// "none", "open_mpi", "mpich_hydra", "slurm", "torchrun".
[[nodiscard]] std::string_view launcher_name(Launcher launcher) noexcept;

/// The variables one launcher sets, field by field; empty where it has none. `launch`
/// is the variable that must be set beside `rank` for the launcher to count as present
/// (torchrun's LOCAL_RANK, Slurm's SLURM_STEP_ID); empty where the rank alone says so.
struct LauncherVariables {
  Launcher launcher;
  std::string_view rank, world_size, local_rank, local_size, node, nodes, launch;
};

/// Every launcher's variables, in the order of precedence above.
[[nodiscard]] std::span<const LauncherVariables> launcher_variables() noexcept;

/// What one launcher's variables say; a field is empty when the launcher does not set
/// it or its value is malformed (not a non-negative decimal integer: the rule of
/// environment_count, whose message lands in `malformed`). Variables that contradict
/// each other are unknown, all of them, never taken as facts: a rank not below the world
/// size, a local rank not below the local size, a node not below the node count, more
/// processes on a node or more nodes than in the world.
struct LauncherInfo {
  Launcher launcher = Launcher::none;
  std::optional<std::int64_t> rank;
  std::optional<std::int64_t> world_size;
  /// This process's index on its node, and the number of processes there.
  std::optional<std::int64_t> local_rank;
  std::optional<std::int64_t> local_size;
  /// The node's index and the number of nodes (Slurm and torchrun say; for the others,
  /// the node count is world_size / local_size when that divides, see node_count()).
  std::optional<std::int64_t> node;
  std::optional<std::int64_t> nodes;
  /// Slurm's place of this task in the switch tree (SLURM_TOPOLOGY_ADDR, e.g.
  /// "spine.leaf1.node1") and the kind of each of its parts (SLURM_TOPOLOGY_ADDR_PATTERN,
  /// "switch.switch.node"); empty unless both are set, whatever the launcher.
  std::optional<std::string> topology_address;
  std::optional<std::string> topology_pattern;
  /// Every other launcher whose variables are present too, in the order above.
  std::vector<Launcher> also_present;
  /// The malformed variables of this launcher, one count_problem message each, in the
  /// order of the fields (SLURM_STEP_TASKS_PER_NODE last); their fields are empty.
  /// `pgroups info` prints them as warnings; nccl::choose_device refuses the same
  /// message as a ConfigError.
  std::vector<std::string> malformed;

  /// nodes, else world_size / local_size when both are known and it divides (nodes of
  /// equal size, as these launchers place by default), else nothing.
  [[nodiscard]] std::optional<std::int64_t> node_count() const;
};

/// The launcher of this process from `lookup` (see the file comment). O(1).
[[nodiscard]] LauncherInfo detect_launcher(const EnvironmentLookup& lookup);

/// detect_launcher over this process's environment (process_environment).
[[nodiscard]] LauncherInfo detect_launcher();

/// Slurm's tasks-per-node list, e.g. "4(x2),3": the count on node `node` (4 for nodes 0
/// and 1, 3 for node 2); nothing when malformed or the node is past the list.
[[nodiscard]] std::optional<std::int64_t> slurm_tasks_on_node(std::string_view list, std::int64_t node);

}  // namespace pgroups
