// Real NCCL communicators: a world from a broadcast unique id, one split per mode, the
// per-group fallback, and the rank-sum check against the layout. Run under mpirun with
// one process per GPU (CTest uses -np 1). Without a visible GPU every case is skipped
// with a message; PGROUPS_REQUIRE_GPU=1 makes that a failure instead (scripts/gpu-check.sh).

#include <gtest/gtest.h>
#include <mpi.h>

#include <map>
#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/nccl/communicator.hpp"
#include "pgroups/nccl/device.hpp"
#include "pgroups/nccl/group_communicators.hpp"
#include "pgroups/nccl/mpi_bootstrap.hpp"
#include "pgroups/nccl/verify.hpp"
#include "pgroups/nccl/version.hpp"

namespace pgroups::nccl {
namespace {

class NcclGpuFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_gpu_count() == 0) {
      const std::optional<std::string> required = process_env("PGROUPS_REQUIRE_GPU");
      if (required && !required->empty() && *required != "0") {
        FAIL() << "no CUDA device is visible, but PGROUPS_REQUIRE_GPU is set";
      }
      GTEST_SKIP() << "no CUDA device is visible (cudaGetDeviceCount failed or returned 0): NCCL GPU test skipped";
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    device_ = bind_device({.node_local_rank = node_local_rank(node), .global_rank = rank_});
    MPI_Comm_free(&node);
  }

  // The richest simple layout this world size allows, so that runs with more ranks
  // exercise pipe and 1d groups too; with one rank: global, data, model, tensor.
  [[nodiscard]] Layout layout() const {
    ParallelConfig config;
    config.world_size = size_;
    config.pipeline = size_ % 2 == 0 ? 2 : 1;
    if (size_ % 4 == 0) {
      config.tensor_size = 2;
      config.tensor_mode = TensorMode::tensor_1d;
    }
    return Layout(config);
  }

  [[nodiscard]] NcclCommunicator world(const CommOptions& options = {}) const {
    return create_world(size_, rank_, mpi_broadcast(MPI_COMM_WORLD), options);
  }

  int rank_ = 0;
  int size_ = 1;
  DeviceChoice device_;
};

class NcclWorld : public NcclGpuFixture {};
class NcclModes : public NcclGpuFixture {};

TEST_F(NcclWorld, CreationGivesEveryProcessItsRankOnItsDevice) {
  NcclCommunicator comm = world();
  ASSERT_TRUE(comm);
  EXPECT_EQ(comm.name(), "global");
  EXPECT_EQ(comm.size(), size_);
  EXPECT_EQ(comm.rank(), rank_);
  EXPECT_EQ(comm.device(), device_.device) << device_.source;
  EXPECT_NO_THROW(comm.destroy());
  EXPECT_FALSE(comm);
}

TEST_F(NcclWorld, AllReduceSumsTheGlobalRanks) {
  NcclCommunicator comm = world();
  EXPECT_EQ(allreduce_rank_sum(comm, rank_), std::int64_t{size_} * (size_ - 1) / 2);
}

TEST_F(NcclWorld, BlockingCreationWorksToo) {
  NcclCommunicator comm = world({.nonblocking = false});
  EXPECT_EQ(comm.size(), size_);
  EXPECT_EQ(allreduce_rank_sum(comm, rank_), std::int64_t{size_} * (size_ - 1) / 2);
}

TEST_F(NcclModes, OneSplitPerModeMatchesTheLayout) {
  if (!split_available())
    GTEST_SKIP() << "compiled against NCCL " << nccl_compile_version() << ", without ncclCommSplit";
  const Layout plan = layout();
  GroupCommunicators comms = create_group_communicators(world(), plan, rank_);
  std::vector<std::string> names;
  for (ParallelMode mode : plan.modes()) names.emplace_back(mode_name(mode));
  ASSERT_EQ(comms.names(), names);
  for (ParallelMode mode : plan.modes()) {
    SCOPED_TRACE(std::string(mode_name(mode)));
    const NcclCommunicator& comm = comms.at(mode);
    EXPECT_EQ(comm.name(), mode_name(mode));
    EXPECT_EQ(comm.size(), plan.group_size(mode));
    EXPECT_EQ(comm.rank(), plan.local_rank(rank_, mode));
    EXPECT_EQ(comm.device(), device_.device);
  }
  for (const GroupCheck& check : verify_rank_sums(comms, plan, rank_)) {
    EXPECT_TRUE(check.ok()) << check.kind << ": expected " << check.expected << ", got " << check.actual;
  }
  EXPECT_NO_THROW(comms.destroy());
  EXPECT_TRUE(comms.empty());
}

TEST_F(NcclModes, SplitWithoutSharingResourcesWorksToo) {
  if (!split_available())
    GTEST_SKIP() << "compiled against NCCL " << nccl_compile_version() << ", without ncclCommSplit";
  const Layout plan = layout();
  GroupCommunicators comms = create_group_communicators(world(), plan, rank_, {.split_share = false});
  for (const GroupCheck& check : verify_rank_sums(comms, plan, rank_)) {
    EXPECT_TRUE(check.ok()) << check.kind << ": expected " << check.expected << ", got " << check.actual;
  }
}

TEST_F(NcclModes, PerGroupInitializationMatchesTheLayout) {
  const Layout plan = layout();
  // One MPI communicator per mode, ordered like the layout's group, as ParallelContext
  // will hold them; the unique id of each group travels over its own.
  std::map<ParallelMode, MPI_Comm> groups;
  for (ParallelMode mode : plan.modes()) {
    MPI_Comm group = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(plan.group_index(rank_, mode)),
                   static_cast<int>(plan.local_rank(rank_, mode)), &group);
    groups[mode] = group;
  }
  {
    GroupCommunicators comms = create_group_communicators(
        world(), plan, rank_, {.use_split = false}, [&](std::size_t kind, std::span<std::byte> bytes) {
          mpi_broadcast(groups.at(plan.group_kinds()[kind].mode.value()))(bytes);
        });
    for (ParallelMode mode : plan.modes()) {
      SCOPED_TRACE(std::string(mode_name(mode)));
      EXPECT_EQ(comms.at(mode).size(), plan.group_size(mode));
      EXPECT_EQ(comms.at(mode).rank(), plan.local_rank(rank_, mode));
    }
    for (const GroupCheck& check : verify_rank_sums(comms, plan, rank_)) {
      EXPECT_TRUE(check.ok()) << check.kind << ": expected " << check.expected << ", got " << check.actual;
    }
  }
  for (auto& [mode, group] : groups) MPI_Comm_free(&group);
}

TEST_F(NcclModes, PerGroupPathWithoutABroadcastFailsBeforeAnyCollective) {
  NcclCommunicator comm = world();
  EXPECT_THROW((void)create_group_communicators(std::move(comm), layout(), rank_, {.use_split = false}), StateError);
}

}  // namespace
}  // namespace pgroups::nccl
