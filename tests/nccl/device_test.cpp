// Device choice: explicit id, then the MPI node-local rank, then the launchers'
// variables, then the global rank, each modulo the visible devices. Pure, with a fake
// environment; visible_gpu_count() must not throw on a machine without a GPU.

#include "pgroups/nccl/device.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "pgroups/common/environment.hpp"
#include "pgroups/common/error.hpp"

namespace pgroups::nccl {
namespace {

EnvLookup fake_env(std::map<std::string, std::string, std::less<>> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    const auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

const EnvLookup kNoEnv = fake_env({});

std::string config_message(const DeviceRequest& request, int visible, const EnvLookup& env) {
  try {
    (void)choose_device(request, visible, env);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "accepted";
}

TEST(NcclDeviceChoice, ExplicitDeviceIsUsedAsIs) {
  const DeviceChoice choice = choose_device({.device = 3, .node_local_rank = 1}, 4, fake_env({{"LOCAL_RANK", "2"}}));
  EXPECT_EQ(choice.device, 3);
  EXPECT_EQ(choice.source, "explicit device 3");
}

TEST(NcclDeviceChoice, ExplicitDeviceBeyondTheVisibleOnesIsRejected) {
  EXPECT_EQ(config_message({.device = 4}, 4, kNoEnv),
            "device 4 was requested, but the visible CUDA devices are 0 to 3");
  EXPECT_EQ(config_message({.device = -1}, 2, kNoEnv),
            "device -1 was requested, but the visible CUDA devices are 0 to 1");
}

TEST(NcclDeviceChoice, NodeLocalRankFromMpiWinsOverTheEnvironment) {
  const DeviceChoice choice = choose_device({.node_local_rank = 5}, 4, fake_env({{"SLURM_LOCALID", "0"}}));
  EXPECT_EQ(choice.device, 1);
  EXPECT_EQ(choice.source, "node-local rank 5 (MPI shared-memory split) modulo 4 visible devices");
}

// The innermost launcher's variable first (launcher_variables()): a torchrun worker
// started by srun or mpirun is torchrun's LOCAL_RANK, not its launcher's task index.
TEST(NcclDeviceChoice, TheInnermostLaunchersVariableComesFirst) {
  const DeviceChoice choice = choose_device(
      {}, 8, fake_env({{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"SLURM_LOCALID", "0"}, {"LOCAL_RANK", "1"}}));
  EXPECT_EQ(choice.device, 1);
  EXPECT_EQ(choice.source, "LOCAL_RANK=1 modulo 8 visible devices");
}

// mpirun's ranks inside a Slurm step inherit its SLURM_LOCALID; their own is Open MPI's.
TEST(NcclDeviceChoice, OpenMpiVariableBeforeSlurms) {
  EXPECT_EQ(choose_device({}, 8, fake_env({{"SLURM_LOCALID", "0"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "6"}})).device, 6);
}

TEST(NcclDeviceChoice, LocalRankWrapsAroundTheVisibleDevices) {
  const DeviceChoice choice = choose_device({.global_rank = 0}, 4, fake_env({{"LOCAL_RANK", "10"}}));
  EXPECT_EQ(choice.device, 2);
  EXPECT_EQ(choice.source, "LOCAL_RANK=10 modulo 4 visible devices");
}

TEST(NcclDeviceChoice, EmptyVariableCountsAsUnset) {
  EXPECT_EQ(choose_device({}, 8, fake_env({{"OMPI_COMM_WORLD_LOCAL_RANK", ""}, {"LOCAL_RANK", "5"}})).device, 5);
}

TEST(NcclDeviceChoice, NonIntegerVariableIsRejectedWithNameAndValue) {
  EXPECT_EQ(config_message({}, 4, fake_env({{"SLURM_LOCALID", "abc"}})), count_problem("SLURM_LOCALID", "abc"));
  EXPECT_EQ(config_message({}, 4, fake_env({{"LOCAL_RANK", "1x"}})),
            "environment variable LOCAL_RANK='1x' is malformed: it must be a non-negative decimal integer (digits "
            "only) that fits in 64 bits");
  EXPECT_NE(config_message({}, 4, fake_env({{"LOCAL_RANK", "-1"}})), "accepted");
  EXPECT_NE(config_message({}, 4, fake_env({{"LOCAL_RANK", "-0"}})), "accepted");
  EXPECT_NE(config_message({}, 4, fake_env({{"LOCAL_RANK", " 1"}})), "accepted");
  EXPECT_NE(config_message({}, 4, fake_env({{"LOCAL_RANK", "+1"}})), "accepted");
  EXPECT_NE(config_message({}, 4, fake_env({{"LOCAL_RANK", "99999999999999999999"}})), "accepted");
}

TEST(NcclDeviceChoice, AMalformedLocalRankIsRefusedInTheLauncherReportsWords) {
  // The launcher report calls the same value unknown with this message
  // (tests/launch/environment_test.cpp); here it would choose a GPU, so it is refused.
  for (const char* text : {"abc", "-1", "-0", "+1", " 1", "0x10", "99999999999999999999"}) {
    EXPECT_EQ(config_message({.global_rank = 3}, 4, fake_env({{"OMPI_COMM_WORLD_LOCAL_RANK", text}})),
              count_problem("OMPI_COMM_WORLD_LOCAL_RANK", text))
        << text;
  }
}

TEST(NcclDeviceChoice, GlobalRankIsTheLastResort) {
  const DeviceChoice choice = choose_device({.global_rank = 13}, 8, kNoEnv);
  EXPECT_EQ(choice.device, 5);
  EXPECT_EQ(choice.source, "global rank 13 modulo 8 visible devices");
}

TEST(NcclDeviceChoice, NothingKnownMeansDeviceZero) {
  EXPECT_EQ(choose_device({}, 8, kNoEnv).device, 0);
  EXPECT_EQ(choose_device({}, 8, EnvLookup{}).device, 0);
}

TEST(NcclDeviceChoice, NegativeRanksAreRejected) {
  EXPECT_EQ(config_message({.node_local_rank = -2}, 4, kNoEnv), "node-local rank -2 is invalid: it must be >= 0");
  EXPECT_EQ(config_message({.global_rank = -1}, 4, kNoEnv), "global rank -1 is invalid: it must be >= 0");
}

TEST(NcclDeviceChoice, NoVisibleDeviceIsABackendError) {
  try {
    (void)choose_device({.device = 0}, 0, kNoEnv);
    FAIL() << "no exception";
  } catch (const BackendError& error) {
    EXPECT_STREQ(error.what(), "no device to bind to: 0 CUDA devices are visible");
  }
}

TEST(NcclVisibleGpus, CountNeverThrowsAndIsNeverNegative) {
  int count = -1;
  EXPECT_NO_THROW(count = visible_gpu_count());
  EXPECT_GE(count, 0);
  EXPECT_EQ(visible_gpu_count(), count);
}

TEST(NcclVisibleGpus, BindingWithoutADeviceSaysNoneIsVisible) {
  if (visible_gpu_count() > 0) GTEST_SKIP() << "a CUDA device is visible; this case is for machines without one";
  try {
    (void)bind_device({.device = 0});
    FAIL() << "no exception";
  } catch (const BackendError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("no CUDA device is visible to this process (", 0), 0u) << error.what();
  }
}

}  // namespace
}  // namespace pgroups::nccl
