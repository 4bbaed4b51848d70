// Launcher detection from tables of environment variables, as each launcher sets them.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "pgroups/launch/launcher.hpp"

namespace pgroups {
namespace {

using Environment = std::map<std::string, std::string, std::less<>>;

LauncherInfo detect(const Environment& env) {
  return detect_launcher([&](std::string_view name) -> std::optional<std::string> {
    const auto found = env.find(name);
    if (found == env.end()) return std::nullopt;
    return found->second;
  });
}

TEST(DetectLauncher, NothingSetMeansNoLauncher) {
  const LauncherInfo info = detect({{"HOME", "/root"}});
  EXPECT_EQ(info.launcher, Launcher::none);
  EXPECT_EQ(launcher_name(info.launcher), "none");
  EXPECT_FALSE(info.node_count());
}

TEST(DetectLauncher, OpenMpiGivesRankSizeAndLocalRankAndNodesFromThem) {
  const LauncherInfo info = detect({{"OMPI_COMM_WORLD_RANK", "5"},
                                    {"OMPI_COMM_WORLD_SIZE", "8"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                    {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(info.launcher, Launcher::open_mpi);
  EXPECT_EQ(launcher_name(info.launcher), "open_mpi");
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.world_size, 8);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_size, 4);
  EXPECT_FALSE(info.node);
  EXPECT_EQ(info.node_count(), 2);
}

TEST(DetectLauncher, MpichHydraUsesPmiAndLocalRankIds) {
  const LauncherInfo info =
      detect({{"PMI_RANK", "3"}, {"PMI_SIZE", "6"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "3"}});
  EXPECT_EQ(info.launcher, Launcher::mpich_hydra);
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.local_size, 3);
  EXPECT_EQ(info.node_count(), 2);
}

TEST(DetectLauncher, ASlurmStepGivesTheNodeAndReadsTasksPerNode) {
  const LauncherInfo info = detect({{"SLURM_PROCID", "9"},
                                    {"SLURM_STEP_ID", "0"},
                                    {"SLURM_STEP_NUM_TASKS", "11"},
                                    {"SLURM_NTASKS", "16"},
                                    {"SLURM_LOCALID", "1"},
                                    {"SLURM_NODEID", "2"},
                                    {"SLURM_STEP_NUM_NODES", "3"},
                                    {"SLURM_NNODES", "4"},
                                    {"SLURM_STEP_TASKS_PER_NODE", "4(x2),3"},
                                    {"SLURM_TASKS_PER_NODE", "4(x4)"}});
  EXPECT_EQ(info.launcher, Launcher::slurm);
  EXPECT_EQ(info.rank, 9);
  // The step's own figures, not the allocation's.
  EXPECT_EQ(info.world_size, 11);
  EXPECT_EQ(info.node, 2);
  EXPECT_EQ(info.nodes, 3);
  EXPECT_EQ(info.local_size, 3);
  EXPECT_EQ(info.node_count(), 3);
}

TEST(DetectLauncher, SlurmsPlaceInTheSwitchTreeIsReadOnlyWithItsPattern) {
  const LauncherInfo info = detect({{"SLURM_PROCID", "1"},
                                    {"SLURM_STEP_ID", "0"},
                                    {"SLURM_TOPOLOGY_ADDR", "spine.leaf1.node1"},
                                    {"SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.node"}});
  EXPECT_EQ(info.topology_address, "spine.leaf1.node1");
  EXPECT_EQ(info.topology_pattern, "switch.switch.node");
  const LauncherInfo without_pattern = detect({{"SLURM_TOPOLOGY_ADDR", "spine.leaf1.node1"}});
  EXPECT_EQ(without_pattern.topology_address, std::nullopt);
  EXPECT_EQ(without_pattern.topology_pattern, std::nullopt);
}

// sbatch runs its script as one process with SLURM_PROCID=0 and the allocation's
// SLURM_NTASKS, but no step: no launch of several ranks.
TEST(DetectLauncher, ASlurmBatchScriptIsNoLaunch) {
  const LauncherInfo info = detect({{"SLURM_JOB_ID", "77"},
                                    {"SLURM_PROCID", "0"},
                                    {"SLURM_NTASKS", "4"},
                                    {"SLURM_NPROCS", "4"},
                                    {"SLURM_LOCALID", "0"},
                                    {"SLURM_NODEID", "0"},
                                    {"SLURM_NNODES", "1"},
                                    {"SLURM_TASKS_PER_NODE", "4"}});
  EXPECT_EQ(info.launcher, Launcher::none);
  EXPECT_FALSE(info.world_size);
}

// The innermost launcher wins: torchrun's workers started by srun (or mpirun) are
// torchrun's, whatever the step around them says.
TEST(DetectLauncher, TorchrunInsideASlurmStepIsTorchrunWithSlurmAlsoPresent) {
  const LauncherInfo info = detect({{"SLURM_PROCID", "1"},
                                    {"SLURM_STEP_ID", "0"},
                                    {"SLURM_STEP_NUM_TASKS", "2"},
                                    {"RANK", "5"},
                                    {"WORLD_SIZE", "8"},
                                    {"LOCAL_RANK", "1"},
                                    {"LOCAL_WORLD_SIZE", "4"}});
  EXPECT_EQ(info.launcher, Launcher::torchrun);
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.world_size, 8);
  ASSERT_EQ(info.also_present.size(), 1U);
  EXPECT_EQ(info.also_present[0], Launcher::slurm);
}

TEST(DetectLauncher, TorchrunNeedsLocalRankBesideRank) {
  const LauncherInfo info = detect({{"RANK", "6"},
                                    {"WORLD_SIZE", "16"},
                                    {"LOCAL_RANK", "6"},
                                    {"LOCAL_WORLD_SIZE", "8"},
                                    {"GROUP_RANK", "0"},
                                    {"GROUP_WORLD_SIZE", "2"}});
  EXPECT_EQ(info.launcher, Launcher::torchrun);
  EXPECT_EQ(info.node, 0);
  EXPECT_EQ(info.node_count(), 2);
  EXPECT_EQ(detect({{"RANK", "6"}, {"WORLD_SIZE", "16"}}).launcher, Launcher::none);
}

TEST(DetectLauncher, MpirunInsideASlurmStepIsOpenMpiWithSlurmAlsoPresent) {
  // mpirun's daemons run as a step; its ranks inherit the step's variables.
  const LauncherInfo info = detect({{"OMPI_COMM_WORLD_RANK", "2"},
                                    {"OMPI_COMM_WORLD_SIZE", "4"},
                                    {"SLURM_PROCID", "0"},
                                    {"SLURM_STEP_ID", "1"},
                                    {"SLURM_STEP_NUM_TASKS", "1"}});
  EXPECT_EQ(info.launcher, Launcher::open_mpi);
  EXPECT_EQ(info.rank, 2);
  ASSERT_EQ(info.also_present.size(), 1U);
  EXPECT_EQ(info.also_present[0], Launcher::slurm);
  // Inside a batch script without a step, Slurm is not present at all.
  EXPECT_TRUE(
      detect(
          {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}})
          .also_present.empty());
}

TEST(DetectLauncher, MalformedOrInconsistentValuesAreDropped) {
  const LauncherInfo info = detect({{"OMPI_COMM_WORLD_RANK", "9"},
                                    {"OMPI_COMM_WORLD_SIZE", "4"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "x1"},
                                    {"OMPI_COMM_WORLD_LOCAL_SIZE", "-2"}});
  EXPECT_EQ(info.launcher, Launcher::open_mpi);
  // 9 is not below the world size 4: which one is wrong is unknown, so neither is kept.
  EXPECT_FALSE(info.rank);
  EXPECT_FALSE(info.world_size);
  EXPECT_FALSE(info.local_rank);
  EXPECT_FALSE(info.local_size);
  EXPECT_FALSE(info.node_count());
}

TEST(DetectLauncher, ContradictoryVariablesAreUnknownNotFacts) {
  const LauncherInfo local = detect({{"OMPI_COMM_WORLD_RANK", "1"},
                                     {"OMPI_COMM_WORLD_SIZE", "4"},
                                     {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_EQ(local.rank, 1);
  EXPECT_EQ(local.world_size, 4);
  EXPECT_FALSE(local.local_rank);
  EXPECT_FALSE(local.local_size);
  EXPECT_FALSE(local.node_count());

  // More processes on one node than in the world: neither size is known.
  const LauncherInfo crowded =
      detect({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "8"}});
  EXPECT_FALSE(crowded.world_size);
  EXPECT_FALSE(crowded.local_size);
  EXPECT_FALSE(crowded.node_count());

  const LauncherInfo nodes = detect({{"SLURM_PROCID", "0"},
                                     {"SLURM_STEP_ID", "0"},
                                     {"SLURM_STEP_NUM_TASKS", "4"},
                                     {"SLURM_NODEID", "5"},
                                     {"SLURM_STEP_NUM_NODES", "3"}});
  EXPECT_EQ(nodes.world_size, 4);
  EXPECT_FALSE(nodes.node);
  EXPECT_FALSE(nodes.nodes);
}

TEST(LauncherVariables, AreTheOneListInnermostFirst) {
  const auto all = launcher_variables();
  ASSERT_EQ(all.size(), 4U);
  EXPECT_EQ(all[0].launcher, Launcher::torchrun);
  EXPECT_EQ(all[0].local_rank, "LOCAL_RANK");
  EXPECT_EQ(all[0].launch, "LOCAL_RANK");
  EXPECT_EQ(all[1].launcher, Launcher::open_mpi);
  EXPECT_EQ(all[1].world_size, "OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(all[2].local_rank, "MPI_LOCALRANKID");
  EXPECT_EQ(all[3].world_size, "SLURM_STEP_NUM_TASKS");
  EXPECT_EQ(all[3].launch, "SLURM_STEP_ID");
}

TEST(SlurmTasksOnNode, ExpandsRepeatsAndRejectsMalformedLists) {
  EXPECT_EQ(slurm_tasks_on_node("4(x2),3", 0), 4);
  EXPECT_EQ(slurm_tasks_on_node("4(x2),3", 1), 4);
  EXPECT_EQ(slurm_tasks_on_node("4(x2),3", 2), 3);
  EXPECT_FALSE(slurm_tasks_on_node("4(x2),3", 3));
  EXPECT_EQ(slurm_tasks_on_node("8", 0), 8);
  EXPECT_FALSE(slurm_tasks_on_node("4(x2", 0));
  EXPECT_FALSE(slurm_tasks_on_node("a", 0));
  EXPECT_FALSE(slurm_tasks_on_node("", 0));
}

}  // namespace
}  // namespace pgroups
