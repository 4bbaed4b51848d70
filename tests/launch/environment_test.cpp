// The one environment reader: a count by one rule, and a malformed value given the same
// answer, in the same words, by every path that reads it (the launcher report here; the
// choice of a GPU in tests/nccl/device_test.cpp, `pgroups info` in
// tests/cli/info_command_test.cpp, Python in python/tests/pure/test_environment.py).

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pgroups/common/environment.hpp"
#include "pgroups/launch/launcher.hpp"

namespace pgroups {
namespace {

using Environment = std::map<std::string, std::string, std::less<>>;

EnvironmentLookup lookup_in(const Environment& env) {
  return [env](std::string_view name) -> std::optional<std::string> {
    const auto found = env.find(name);
    if (found == env.end()) return std::nullopt;
    return found->second;
  };
}

// Every kind of malformed value: not a number, a sign (even "-0"), a space, another
// notation, past 64 bits.
const std::vector<std::string> kMalformed = {
    "abc", "-1", "-0", "+1", " 1", "1 ", "1x", "0x10", "1e3", "1.0", "99999999999999999999"};

TEST(EnvironmentCount, ReadsDecimalDigitsOnly) {
  EXPECT_EQ(parse_environment_count("0"), 0);
  EXPECT_EQ(parse_environment_count("17"), 17);
  EXPECT_EQ(parse_environment_count("007"), 7);
  EXPECT_EQ(parse_environment_count("9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(parse_environment_count("9223372036854775808"));
  for (const std::string& text : kMalformed) EXPECT_FALSE(parse_environment_count(text)) << text;
}

TEST(EnvironmentCount, UnsetAndEmptyAreTheSameAndNoProblem) {
  for (const Environment& env : {Environment{}, Environment{{"LOCAL_RANK", ""}}}) {
    const EnvironmentCount count = environment_count(lookup_in(env), "LOCAL_RANK");
    EXPECT_FALSE(count.value);
    EXPECT_FALSE(count.malformed());
  }
}

TEST(EnvironmentCount, AMalformedValueIsNamedWithTheVariableTheValueAndTheRule) {
  const EnvironmentCount count =
      environment_count(lookup_in({{"OMPI_COMM_WORLD_LOCAL_RANK", "abc"}}), "OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_FALSE(count.value);
  EXPECT_EQ(count.problem,
            "environment variable OMPI_COMM_WORLD_LOCAL_RANK='abc' is malformed: it must be a non-negative decimal "
            "integer (digits only) that fits in 64 bits");
}

TEST(EnvironmentCount, TheLauncherReportGivesEachMalformedLocalRankAsUnknownWithTheSameMessage) {
  for (const std::string& text : kMalformed) {
    const LauncherInfo info = detect_launcher(lookup_in({{"OMPI_COMM_WORLD_RANK", "1"},
                                                         {"OMPI_COMM_WORLD_SIZE", "4"},
                                                         {"OMPI_COMM_WORLD_LOCAL_RANK", text},
                                                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
    EXPECT_EQ(info.launcher, Launcher::open_mpi) << text;
    EXPECT_EQ(info.rank, 1) << text;
    EXPECT_FALSE(info.local_rank) << text;
    EXPECT_EQ(info.local_size, 2) << text;
    EXPECT_EQ(info.malformed, std::vector<std::string>{count_problem("OMPI_COMM_WORLD_LOCAL_RANK", text)}) << text;
  }
}

TEST(EnvironmentCount, OnlyTheChosenLauncherReportsItsMalformedValues) {
  // Slurm is also present (mpirun inside a step) but not the launcher: its bad node
  // index is nobody's fact, and not reported.
  const LauncherInfo info = detect_launcher(
      lookup_in({{"OMPI_COMM_WORLD_RANK", "0"}, {"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NODEID", "x"}}));
  EXPECT_EQ(info.launcher, Launcher::open_mpi);
  EXPECT_TRUE(info.malformed.empty());
}

TEST(EnvironmentCount, AMalformedSlurmTasksPerNodeIsReported) {
  const LauncherInfo info = detect_launcher(lookup_in(
      {{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"SLURM_NODEID", "0"}, {"SLURM_STEP_TASKS_PER_NODE", "4(x"}}));
  EXPECT_EQ(info.launcher, Launcher::slurm);
  EXPECT_FALSE(info.local_size);
  ASSERT_EQ(info.malformed.size(), 1U);
  EXPECT_NE(info.malformed[0].find("SLURM_STEP_TASKS_PER_NODE='4(x'"), std::string::npos) << info.malformed[0];
}

}  // namespace
}  // namespace pgroups
