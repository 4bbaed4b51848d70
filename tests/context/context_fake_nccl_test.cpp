// ParallelContext's NCCL path on machines without a GPU: real MPI under mpirun, with the
// NCCL host API and the CUDA device calls scripted in the test (tests/nccl/fake_nccl.hpp,
// fake_cuda.hpp), each process playing its own rank. It shows what one GPU cannot: the
// world and one split per mode with the layout's colour and key on every rank, the
// handles get_group hands out, the device each rank binds, teardown of NCCL in reverse
// creation order, and that failures on some ranks stop every rank before (or abort
// everything after) the first NCCL call.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "fake_cuda.hpp"
#include "fake_nccl.hpp"
#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/mpi/bootstrap.hpp"

namespace pgroups {
namespace {

using mpi::Communicator;

// Sharing off: these cases check the mechanism of one split per kind; the shared, world
// and one-rank kinds have their own cases (ParallelContextFakeNcclSharing).
ContextOptions nccl_options() {
  ContextOptions options;
  options.backend = Backend::nccl;
  options.share_communicators = false;
  return options;
}

int node_local_rank() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, test::world_rank(), MPI_INFO_NULL, &node);
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

class ParallelContextFakeNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_cuda::reset();
    // Each split's child has the layout's group size, with this rank at its key.
    const std::vector<ParallelMode> created(layout_.modes().begin() + 1, layout_.modes().end());
    fake_nccl::reset({.split_shape = [this, created](int call, int, int key) {
      return std::pair{static_cast<int>(layout_.group_size(created.at(static_cast<std::size_t>(call)))), key};
    }});
  }

  const Layout layout_{[] {
    ParallelConfig config = test::richest_config();
    config.world_size = test::world_size();
    return config;
  }()};
};

TEST_F(ParallelContextFakeNccl, CreatesTheWorldThenOneSplitPerModeWithTheLayoutsColourAndKey) {
  const std::int64_t rank = test::world_rank();
  std::vector<std::string> steps;
  ContextOptions options = nccl_options();
  options.before_step = [&steps](std::string_view step) { steps.emplace_back(step); };
  const ParallelContext context(layout_.config(), MPI_COMM_WORLD, options);

  const std::vector<fake_nccl::Creation>& creations = fake_nccl::record().creations;
  ASSERT_EQ(creations.size(), layout_.modes().size());
  EXPECT_EQ(creations[0].call, "init");
  EXPECT_EQ(creations[0].nranks, test::world_size());
  EXPECT_EQ(creations[0].rank, rank);
  EXPECT_EQ(fake_nccl::record().unique_ids, rank == 0 ? 1 : 0);
  for (std::size_t i = 1; i < creations.size(); ++i) {
    const ParallelMode mode = layout_.modes()[i];
    SCOPED_TRACE(std::string(mode_name(mode)));
    EXPECT_EQ(creations[i].call, "split");
    EXPECT_EQ(creations[i].colour, layout_.group_index(rank, mode));
    EXPECT_EQ(creations[i].key, layout_.local_rank(rank, mode));
    EXPECT_EQ(creations[i].blocking, 0);
  }
  // The device is bound before the first mode, the NCCL communicators come last.
  const auto node = std::find(steps.begin(), steps.end(), "node");
  ASSERT_NE(node, steps.end());
  ASSERT_NE(node + 1, steps.end());
  EXPECT_EQ(*(node + 1), "device");
  EXPECT_EQ(steps.back(), "nccl");
}

TEST_F(ParallelContextFakeNccl, GetGroupHandsOutTheNcclCommunicatorsAndGetCpuGroupTheMpiOnes) {
  const ParallelContext context(layout_.config(), MPI_COMM_WORLD, nccl_options());
  EXPECT_EQ(context.backend(), Backend::nccl);
  std::set<ncclComm_t> distinct;
  for (ParallelMode mode : context.modes()) {
    SCOPED_TRACE(std::string(mode_name(mode)));
    const GroupHandle device = context.get_group(mode);
    ASSERT_EQ(device.backend(), Backend::nccl);
    EXPECT_NE(device.nccl(), nullptr);
    distinct.insert(device.nccl());
    EXPECT_THROW((void)device.mpi(), StateError);
    const GroupHandle cpu = context.get_cpu_group(mode);
    ASSERT_EQ(cpu.backend(), Backend::mpi);
    EXPECT_EQ(test::observe(cpu.mpi(), test::world_rank()).members, context.ranks_in_group(mode));
    EXPECT_GE(context.creation_seconds(mode), context.device_creation_seconds(mode));
  }
  EXPECT_EQ(distinct.size(), context.modes().size());
  EXPECT_GT(context.device_creation_seconds(ParallelMode::global), 0.0);
}

// NCCL with no MPI in the creation: the unique id and the device agreement go through a
// bootstrap (the MPI one here, under mpirun; PMIx's and the environment's use the same
// path), the CPU groups are gloo's where gloo is built.
TEST_F(ParallelContextFakeNccl, OnABootstrapTheWorldAndOneSplitPerModeAreMadeAndTheCpuGroupsAreGloos) {
  const std::int64_t rank = test::world_rank();
  std::vector<std::string> steps;
  ContextOptions options = nccl_options();
  options.before_step = [&steps](std::string_view step) { steps.emplace_back(step); };
  mpi::MpiBootstrap bootstrap(Communicator::borrow(MPI_COMM_WORLD));
  const ParallelContext context(layout_.config(), bootstrap, options);
  const std::vector<fake_nccl::Creation>& creations = fake_nccl::record().creations;
  ASSERT_EQ(creations.size(), layout_.modes().size());
  EXPECT_EQ(creations[0].call, "init");
  EXPECT_EQ(creations[0].nranks, test::world_size());
  EXPECT_EQ(fake_nccl::record().unique_ids, rank == 0 ? 1 : 0);
  for (std::size_t i = 1; i < creations.size(); ++i) {
    EXPECT_EQ(creations[i].call, "split");
    EXPECT_EQ(creations[i].colour, layout_.group_index(rank, layout_.modes()[i]));
  }
  const std::vector<std::string> expected_steps =
      backend_built(Backend::gloo) ? std::vector<std::string>{"agreement", "node", "device", "gloo", "nccl"}
                                   : std::vector<std::string>{"agreement", "node", "device", "nccl"};
  EXPECT_EQ(steps, expected_steps);
  EXPECT_EQ(context.get_group(ParallelMode::tensor).backend(), Backend::nccl);
  if (backend_built(Backend::gloo)) {
    EXPECT_EQ(context.get_cpu_group(ParallelMode::tensor).backend(), Backend::gloo);
  } else {
    EXPECT_THROW((void)context.get_cpu_group(ParallelMode::tensor), StateError);
  }
  EXPECT_EQ(context.device(), node_local_rank() % 2);
}

TEST_F(ParallelContextFakeNccl, EachRankBindsItsNodeLocalRankModuloTheVisibleDevices) {
  const ParallelContext context(layout_.config(), MPI_COMM_WORLD, nccl_options());
  const int expected = node_local_rank() % 2;
  EXPECT_EQ(context.device(), expected);
  EXPECT_EQ(fake_cuda::current_device(), expected);
}

TEST_F(ParallelContextFakeNccl, AnExplicitDeviceIsBoundAsGivenAndAnInvisibleOneIsAConfigError) {
  ContextOptions options = nccl_options();
  options.device = 1;
  {
    const ParallelContext context(layout_.config(), MPI_COMM_WORLD, options);
    EXPECT_EQ(context.device(), 1);
    EXPECT_EQ(fake_cuda::current_device(), 1);
  }
  options.device = 5;
  const std::int64_t before = Communicator::live_count();
  try {
    const ParallelContext context(layout_.config(), MPI_COMM_WORLD, options);
    ADD_FAILURE() << "no exception";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(), "device 5 was requested, but the visible CUDA devices are 0 to 1");
  }
  EXPECT_EQ(Communicator::live_count(), before);
}

TEST_F(ParallelContextFakeNccl, DestroyTearsDownTheNcclCommunicatorsInReverseCreationOrder) {
  const std::int64_t before = Communicator::live_count();
  ParallelContext context(layout_.config(), MPI_COMM_WORLD, nccl_options());
  const int created = static_cast<int>(fake_nccl::record().creations.size());
  context.destroy();
  std::vector<std::string> expected;
  for (int id = created; id >= 1; --id) {
    expected.push_back(fmt::format("finalize {}", id));
    expected.push_back(fmt::format("destroy {}", id));
  }
  EXPECT_EQ(fake_nccl::record().teardown, expected);
  EXPECT_TRUE(fake_nccl::record().live.empty());
  EXPECT_EQ(Communicator::live_count(), before);
  EXPECT_THROW((void)context.get_group(ParallelMode::global), StateError);
  EXPECT_EQ(context.device(), node_local_rank() % 2) << "the bound device stays known after destroy()";
  EXPECT_NO_THROW(context.destroy());
  EXPECT_EQ(fake_nccl::record().teardown.size(), expected.size());
}

TEST_F(ParallelContextFakeNccl, TheDestructorAndAMoveFreeBothKinds) {
  const std::int64_t before = Communicator::live_count();
  {
    ParallelContext first(layout_.config(), MPI_COMM_WORLD, nccl_options());
    const GroupHandle global = first.get_group(ParallelMode::global);
    ParallelContext second = std::move(first);
    EXPECT_EQ(second.get_group(ParallelMode::global), global);
    EXPECT_EQ(second.device(), node_local_rank() % 2);
  }
  EXPECT_TRUE(fake_nccl::record().live.empty());
  EXPECT_TRUE(fake_nccl::record().teardown.size() >= 2 && fake_nccl::record().teardown.back() == "destroy 1");
  EXPECT_EQ(Communicator::live_count(), before);
}

TEST_F(ParallelContextFakeNccl, AFailedSplitAbortsEveryNcclCommunicatorAndFreesTheMpiOnes) {
  if (layout_.modes().size() < 3) GTEST_SKIP() << "needs two splits";
  fake_nccl::Script script;
  script.split_return = [](int call) { return call == 1 ? ncclInternalError : ncclSuccess; };
  script.split_shape = [this](int call, int, int key) {
    return std::pair{static_cast<int>(layout_.group_size(layout_.modes()[static_cast<std::size_t>(call) + 1])), key};
  };
  fake_nccl::set_script(script);
  const std::int64_t before = Communicator::live_count();
  try {
    const ParallelContext context(layout_.config(), MPI_COMM_WORLD, nccl_options());
    ADD_FAILURE() << "no exception";
  } catch (const BackendError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("ncclCommSplit of communicator", 0), 0U) << error.what();
  }
  EXPECT_TRUE(fake_nccl::record().live.empty());
  EXPECT_EQ(fake_nccl::record().teardown, (std::vector<std::string>{"abort 2", "abort 1"}));
  EXPECT_EQ(Communicator::live_count(), before);
}

TEST_F(ParallelContextFakeNccl, ARankWithoutADeviceStopsEveryRankBeforeAnyNcclCall) {
  if (test::world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const int last = test::world_size() - 1;
  if (test::world_rank() == last) fake_cuda::set_visible_devices(0);
  const std::int64_t before = Communicator::live_count();
  std::string message;
  try {
    const ParallelContext context(layout_.config(), MPI_COMM_WORLD, nccl_options());
    ADD_FAILURE() << "no exception";
  } catch (const BackendError& error) {
    message = error.what();
  }
  const std::string cause = "backend nccl needs a CUDA device, but none is visible to this process";
  if (test::world_rank() == last) {
    EXPECT_EQ(message.rfind(cause, 0), 0U) << message;
  } else {
    EXPECT_EQ(message.rfind(fmt::format("binding a CUDA device for the NCCL backend failed on rank {}; rank {}: {}",
                                        last, last, cause),
                            0),
              0U)
        << message;
  }
  EXPECT_TRUE(fake_nccl::record().creations.empty());
  EXPECT_EQ(fake_nccl::record().unique_ids, 0);
  EXPECT_EQ(Communicator::live_count(), before);
}

TEST(ParallelContextFakeNcclMesh, ARankOutsideAPartialKindSplitsWithNoColourAndHoldsNoCommunicator) {
  if (test::world_size() != 2) GTEST_SKIP() << "for two ranks";
  const int rank = test::world_rank();
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"pp", 2}}, .groups = {"pp", "embd", "pos_embd"}};
  const Layout layout(config);
  fake_cuda::reset();
  fake_nccl::reset({.split_shape = [&layout](int call, int, int key) {
    return std::pair{static_cast<int>(layout.group_size(static_cast<std::size_t>(call))), key};
  }});
  const ParallelContext context(config, MPI_COMM_WORLD, nccl_options());
  const std::vector<fake_nccl::Creation>& creations = fake_nccl::record().creations;
  ASSERT_EQ(creations.size(), 4U);  // the world, then one split per kind, members or not
  EXPECT_EQ(creations[1].colour, 0);
  EXPECT_EQ(creations[2].colour, 0);  // embd: the first and the last stage
  EXPECT_EQ(creations[3].colour, rank == 0 ? 0 : NCCL_SPLIT_NOCOLOR);  // pos_embd: the first stage only
  EXPECT_EQ(context.is_member("pos_embd"), rank == 0);
  if (rank == 0) {
    EXPECT_EQ(context.get_group("pos_embd").backend(), Backend::nccl);
    EXPECT_EQ(context.world_size("pos_embd"), 1);
  } else {
    EXPECT_THROW((void)context.get_group("pos_embd"), StateError);
  }
  EXPECT_EQ(context.get_group("embd").backend(), Backend::nccl);
  EXPECT_EQ(context.get_cpu_group("pp").backend(), Backend::mpi);
}

TEST(ParallelContextFakeNcclMesh, AMeshDimensionMayBeCalledGlobalWithoutMeetingTheWorldsKey) {
  if (test::world_size() != 2) GTEST_SKIP() << "for two ranks";
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"global", 2}}, .groups = {}};
  fake_cuda::reset();
  // The one kind spans the world: every split has its two ranks.
  fake_nccl::reset({.split_shape = [](int, int, int key) { return std::pair{2, key}; }});
  // With sharing (the default), the one kind spans the world, so the world serves it
  // (docs/using/context.md, "Communicator economy"): no split, and the kind's name never meets the world's key.
  // (nccl_options() turns sharing off.)
  ContextOptions shared = nccl_options();
  shared.share_communicators = true;
  {
    const ParallelContext context(config, MPI_COMM_WORLD, shared);
    ASSERT_EQ(fake_nccl::record().creations.size(), 1U);
    EXPECT_EQ(context.get_group("global").backend(), Backend::nccl);
    EXPECT_EQ(context.world_size("global"), 2);
    EXPECT_GE(context.creation_seconds("global"), 0.0);
  }
  // Without sharing the kind "global" is split off the world as any kind is, and is its
  // own communicator beside the world's.
  fake_cuda::reset();
  fake_nccl::reset({.split_shape = [](int, int, int key) { return std::pair{2, key}; }});
  const ParallelContext context(config, MPI_COMM_WORLD, nccl_options());
  const std::vector<fake_nccl::Creation>& creations = fake_nccl::record().creations;
  ASSERT_EQ(creations.size(), 2U);
  EXPECT_EQ(creations[0].call, "init");
  EXPECT_EQ(creations[1].call, "split");
  EXPECT_EQ(context.get_group("global").backend(), Backend::nccl);
  EXPECT_EQ(context.world_size("global"), 2);
}

// Communicator economy on two ranks: pp and pp-tp are the whole world (the NCCL world serves them), tp
// and pos_embd have one-rank groups (no split; one communicator of this rank alone, made when
// one of them is asked for, serves both). embd at pp = 2 keeps both stages, so its partition is pp's and it
// shares the world too (equal partitions are one communicator): no split at all.
TEST(ParallelContextFakeNcclSharing, OnlyDistinctPartitionsAreCreatedAndOneRankKindsWaitUntilAskedFor) {
  if (test::world_size() != 2) GTEST_SKIP() << "for two ranks";
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"pp", 2}, {"tp", 1}}, .groups = {"pp", "tp", "pp-tp", "embd", "pos_embd"}};
  const Layout layout(config);
  fake_cuda::reset();
  fake_nccl::reset({.split_shape = [](int, int, int key) { return std::pair{2, key}; }});
  ContextOptions options;
  options.backend = Backend::nccl;
  ParallelContext context(config, MPI_COMM_WORLD, options);
  const std::vector<fake_nccl::Creation>& creations = fake_nccl::record().creations;
  ASSERT_EQ(creations.size(), 1U);  // the world only
  EXPECT_EQ(creations[0].call, "init");
  EXPECT_EQ(context.communicator_bill(), (CommunicatorBill{5, 1, 2, 1}));
  EXPECT_EQ(context.communicator_bill(), largest_communicator_bill(layout));
  EXPECT_EQ(context.get_group("pp").nccl(), context.get_group("pp-tp").nccl());
  EXPECT_EQ(context.get_group("embd").nccl(), context.get_group("pp").nccl());
  // The one-rank communicator: created now, by this rank alone, once.
  const ncclComm_t tp = context.get_group("tp").nccl();
  ASSERT_EQ(creations.size(), 2U);
  EXPECT_EQ(creations[1].call, "init");
  EXPECT_EQ(creations[1].nranks, 1);
  EXPECT_EQ(creations[1].rank, 0);
  EXPECT_EQ(context.get_group("tp").nccl(), tp);
  EXPECT_EQ(creations.size(), 2U);
  // Every one-rank kind of the rank shares that one: pos_embd (on the first stage) makes none.
  if (context.view().is_member(context.view().kind("pos_embd"))) {
    EXPECT_EQ(context.get_group("pos_embd").nccl(), tp);
    EXPECT_EQ(creations.size(), 2U);
  }
  context.destroy();
  EXPECT_TRUE(fake_nccl::record().live.empty());  // each freed once
}

}  // namespace
}  // namespace pgroups
