// A command that needs no MPI, started by an MPI launcher as one of several ranks,
// refuses at once with a non-zero status (docs/reference/errors.md, "Timeouts and failed ranks"):
// it cannot know what its neighbours run, and MPI ranks beside it would wait for it in
// MPI_Init. The launchers' variables are set by hand here; tests/cli_mpi launches the
// real mixed jobs.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "support/run_command.hpp"

namespace pgroups {
namespace {

using test::run_command;

test::CommandResult run_under(const std::string& environment, const std::string& arguments) {
  return run_command(fmt::format("env {} {} {}", environment, PGROUPS_CLI, arguments));
}

constexpr const char* kOpenMpiOfFour = "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4";

TEST(LauncherRefusal, EveryCommandThatNeedsNoMpiRefusesAsOneOfSeveralRanks) {
  for (const std::string command : {"plan -w 8", "explain -w 8 --rank 0", "info", "plan --help", "--help"
#ifdef PGROUPS_TEST_CLI_WITH_JOBS
                                    ,
                                    "bench --model --max-world 8", "verify --help"
#endif
       }) {
    const auto result = run_under(kOpenMpiOfFour, command);
    EXPECT_EQ(result.status, 2) << command;
    EXPECT_EQ(result.out, "") << command;
    EXPECT_NE(result.err.find("needs no MPI, but it was started as one of 4 ranks by open_mpi "
                              "(OMPI_COMM_WORLD_SIZE=4): it cannot know what the other ranks run"),
              std::string::npos)
        << command << ": " << result.err;
  }
  const auto plan = run_under(kOpenMpiOfFour, "plan -w 8");
  EXPECT_EQ(plan.err.rfind("pgroups: error: pgroups plan needs no MPI", 0), 0U) << plan.err;
}

TEST(LauncherRefusal, TheRefusalOfHelpNamesTheCommandWhoseHelpWasAskedFor) {
  for (const auto& [command, named] :
       std::vector<std::pair<std::string, std::string>>{{"plan --help", "pgroups plan --help"},
                                                        {"explain -h", "pgroups explain --help"},
                                                        {"info --help", "pgroups info --help"},
                                                        {"--help", "pgroups --help"}}) {
    const auto result = run_under(kOpenMpiOfFour, command);
    EXPECT_EQ(result.status, 2) << command;
    EXPECT_EQ(result.err.rfind(fmt::format("pgroups: error: {} needs no MPI, but it was started", named), 0), 0U)
        << command << ": " << result.err;
  }
}

TEST(LauncherRefusal, EveryMpiLauncherCounts) {
  const auto slurm = run_under("SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=2 SLURM_NTASKS=4", "plan -w 8");
  EXPECT_EQ(slurm.status, 2);
  EXPECT_NE(slurm.err.find("one of 2 ranks by slurm (SLURM_STEP_NUM_TASKS=2)"), std::string::npos) << slurm.err;
  const auto hydra = run_under("PMI_RANK=1 PMI_SIZE=3", "explain -w 8 --rank 0");
  EXPECT_EQ(hydra.status, 2);
  EXPECT_NE(hydra.err.find("one of 3 ranks by mpich_hydra (PMI_SIZE=3)"), std::string::npos) << hydra.err;
}

TEST(LauncherRefusal, OneRankTorchrunAndContradictoryVariablesRunAsUsual) {
  // One rank: nobody waits beside it.
  EXPECT_EQ(run_under("OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1", "plan -w 8").status, 0);
  // torchrun starts no MPI job.
  EXPECT_EQ(run_under("RANK=0 WORLD_SIZE=4 LOCAL_RANK=0", "plan -w 8").status, 0);
  // A rank past the world size: the size is unknown, not a fact to act on.
  const auto contradictory = run_under("OMPI_COMM_WORLD_RANK=5 OMPI_COMM_WORLD_SIZE=4", "plan -w 8");
  EXPECT_EQ(contradictory.status, 0) << contradictory.err;
}

// What sbatch sets in its batch script (one process, no step): no launch of several ranks.
constexpr const char* kSlurmBatchScript =
    "SLURM_JOB_ID=77 SLURM_PROCID=0 SLURM_NTASKS=4 SLURM_NPROCS=4 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_NNODES=1 "
    "SLURM_TASKS_PER_NODE=4";

TEST(LauncherRefusal, ASlurmBatchScriptRunsAsUsual) {
  for (const std::string command : {"plan -w 8", "info", "--help"}) {
    const auto result = run_under(kSlurmBatchScript, command);
    EXPECT_EQ(result.status, 0) << command << ": " << result.err;
    EXPECT_NE(result.out, "") << command;
  }
  const auto plan = run_under(kSlurmBatchScript, "plan -w 8 -p 2 -t 4 -m 2d");
  EXPECT_EQ(plan.out.rfind("world size 8 = data 1 x pipeline 2 x tensor 4 (2d, q=2)\n", 0), 0U) << plan.out;
}

TEST(LauncherRefusal, TorchrunWorkersStartedBySrunAreTorchrunsAndRunAsUsual) {
  const auto result = run_under(
      "SLURM_PROCID=1 SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=2 RANK=5 WORLD_SIZE=8 LOCAL_RANK=1 LOCAL_WORLD_SIZE=4",
      "plan -w 8");
  EXPECT_EQ(result.status, 0) << result.err;
}

TEST(LauncherRefusal, AUsageErrorKeepsItsOwnMessageAndStatus) {
  const auto result = run_under(kOpenMpiOfFour, "plan --no-such-flag");
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("--no-such-flag"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace pgroups
