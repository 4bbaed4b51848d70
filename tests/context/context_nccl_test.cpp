// ParallelContext with the NCCL backend, and the GroupHandle that carries either kind of
// communicator. Runs under mpirun in every build: what can be checked without a GPU
// (the backend's names, the agreement on it, a clean BackendError on every rank when no
// GPU is visible, a clean ConfigError when NCCL was not built) always runs; the cases
// that create NCCL communicators skip with a message when the ranks of a node do not
// each have a GPU, and fail instead when PGROUPS_REQUIRE_GPU is set and none is visible.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/backend.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/mpi/agreement.hpp"

namespace pgroups {
namespace {

using mpi::Communicator;

ContextOptions with_backend(Backend backend) {
  ContextOptions options;
  options.backend = backend;
  return options;
}

bool gpu_required() {
  const char* value = std::getenv("PGROUPS_REQUIRE_GPU");  // NOLINT(concurrency-mt-unsafe): read-only use
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

TEST(BackendNames, ParseRoundTripsEveryNameAndRejectsOthersWithASuggestion) {
  for (Backend backend : kAllBackends) EXPECT_EQ(parse_backend(backend_name(backend)), backend);
  try {
    (void)parse_backend("ncl");
    FAIL() << "no exception";
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(),
                 "unknown backend 'ncl'; the backend must be one of mpi, nccl, gloo (did you mean nccl?)");
  }
  EXPECT_TRUE(backend_built(Backend::mpi));
  EXPECT_NO_THROW(require_backend_usable(Backend::mpi));
}

TEST(BackendNames, TheAgreementTextNamesTheBackendBeforeTheStrategy) {
  ParallelConfig config;
  config.world_size = 4;
  const ContextOptions options = with_backend(Backend::nccl);
  EXPECT_EQ(agreement_text(config, options),
            fmt::format("world_size=4 pipeline=1 tensor=1 mode=none depth=- legacy_sequence_dp=false seed=1024 "
                        "mesh=- node_info=shared_memory_split backend=nccl strategy={}",
                        strategy_name(options.strategy)));
}

TEST(GroupHandle, AnMpiHandleRefusesToBeReadAsNcclAndNamesItsBackend) {
  const GroupHandle handle("tensor", MPI_COMM_WORLD);
  EXPECT_EQ(handle.backend(), Backend::mpi);
  EXPECT_EQ(handle.mpi(), MPI_COMM_WORLD);
  try {
    (void)handle.nccl();
    FAIL() << "no exception";
  } catch (const StateError& error) {
    EXPECT_STREQ(error.what(),
                 "the group handle of group tensor holds an MPI communicator (backend mpi), not an NCCL one; get_group "
                 "returns an NCCL communicator only when the context was built with backend nccl");
  }
}

TEST(GroupHandle, AnNcclHandleRefusesToBeReadAsMpiAndPointsToTheCpuGroup) {
  // Never dereferenced: the handle only carries it.
  int storage = 0;
  const auto fake = reinterpret_cast<ncclComm_t>(&storage);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  const GroupHandle handle("data", fake);
  EXPECT_EQ(handle.backend(), Backend::nccl);
  EXPECT_EQ(handle.nccl(), fake);
  EXPECT_NE(handle, GroupHandle("data", MPI_COMM_WORLD));
  EXPECT_EQ(handle, GroupHandle("data", fake));
  try {
    (void)handle.mpi();
    FAIL() << "no exception";
  } catch (const StateError& error) {
    EXPECT_STREQ(error.what(),
                 "the group handle of group data holds an NCCL communicator (backend nccl), not an MPI one; "
                 "get_cpu_group returns the MPI communicator whatever the context's backend, when the context was "
                 "built over MPI");
  }
}

TEST(ParallelContextBackend, WithMpiGetGroupIsTheCpuGroupAndThereAreNoDeviceGroups) {
  ParallelContext context(test::richest_config(), MPI_COMM_WORLD);
  EXPECT_EQ(context.backend(), Backend::mpi);
  for (ParallelMode mode : context.modes()) {
    EXPECT_EQ(context.get_group(mode), context.get_cpu_group(mode)) << mode_name(mode);
    EXPECT_EQ(context.device_creation_seconds(mode), 0.0) << mode_name(mode);
  }
  try {
    (void)context.check_device_groups();
    FAIL() << "no exception";
  } catch (const StateError& error) {
    EXPECT_STREQ(error.what(), "the context has no device groups to check: its backend is mpi, not nccl");
  }
}

TEST(ParallelContextBackend, ADifferentBackendOnOneRankIsAMismatchOnEveryRank) {
  if (test::world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const bool last = test::world_rank() == test::world_size() - 1;
  const std::int64_t before = Communicator::live_count();
  std::string message;
  try {
    const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD, with_backend(last ? Backend::nccl : Backend::mpi));
    ADD_FAILURE() << "no exception";
  } catch (const MismatchError& error) {
    message = error.what();
  }
  const std::string_view strategy = strategy_name(ContextOptions{}.strategy);
  EXPECT_NE(message.find(fmt::format("backend=nccl strategy={}'", strategy)), std::string::npos) << message;
  EXPECT_NE(message.find(fmt::format("backend=mpi strategy={}'", strategy)), std::string::npos) << message;
  EXPECT_TRUE(test::same_everywhere(MPI_COMM_WORLD, static_cast<std::int64_t>(mpi::text_hash(message) >> 1)));
  EXPECT_EQ(Communicator::live_count(), before);
}

// What a job asking for NCCL gets where it cannot have it: the same clean error on every
// rank, quickly, with nothing left allocated, and a context that builds right after.
class ParallelContextNcclUnavailable : public ::testing::Test {
 protected:
  void expect_clean_failure(const std::string& expected_start, ExitCode expected_code) {
    const ParallelConfig config = test::richest_config();
    const std::int64_t before = Communicator::live_count();
    const int index_before = test::fortran_index_of_a_new_communicator();
    const auto start = std::chrono::steady_clock::now();
    std::string message;
    ExitCode code = ExitCode::ok;
    try {
      const ParallelContext context(config, MPI_COMM_WORLD, with_backend(Backend::nccl));
      ADD_FAILURE() << "no exception";
    } catch (const Error& error) {
      message = error.what();
      code = error.exit_code();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(code, expected_code) << message;
    EXPECT_EQ(message.rfind(expected_start, 0), 0U) << message;
    EXPECT_TRUE(test::same_everywhere(MPI_COMM_WORLD, static_cast<std::int64_t>(mpi::text_hash(message) >> 1)))
        << "ranks threw different messages; this one: " << message;
    EXPECT_LT(seconds, 30.0);
    EXPECT_EQ(Communicator::live_count(), before);
    EXPECT_LE(test::fortran_index_of_a_new_communicator(), index_before + 2);
    const ParallelContext next(config, MPI_COMM_WORLD);
    EXPECT_TRUE(next.is_initialized(ParallelMode::global));
  }
};

TEST_F(ParallelContextNcclUnavailable, WithoutAVisibleGpuEveryRankThrowsTheSameBackendErrorAndLeaksNothing) {
  if (!backend_built(Backend::nccl)) GTEST_SKIP() << "pgroups was built without NCCL (see the next test)";
  if (visible_device_count() > 0) GTEST_SKIP() << "a CUDA device is visible: the no-GPU path cannot be shown here";
  expect_clean_failure("backend nccl needs a CUDA device, but none is visible to this process", ExitCode::backend);
}

TEST_F(ParallelContextNcclUnavailable, InABuildWithoutNcclEveryRankThrowsAConfigErrorSayingHowToEnableIt) {
  if (backend_built(Backend::nccl)) GTEST_SKIP() << "pgroups was built with NCCL (see the previous test)";
  expect_clean_failure(
      "backend nccl was requested, but this build of pgroups has no nccl backend; reconfigure with "
      "-DPGROUPS_WITH_NCCL=ON",
      ExitCode::config);
}

// Real NCCL communicators: every rank of a node needs a GPU of its own (NCCL refuses two
// ranks of one communicator on one device).
class ParallelContextNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_built(Backend::nccl)) GTEST_SKIP() << "pgroups was built without NCCL";
    const int devices = visible_device_count();
    if (devices == 0) {
      if (gpu_required()) FAIL() << "no CUDA device is visible, but PGROUPS_REQUIRE_GPU is set";
      GTEST_SKIP() << "no CUDA device is visible (cudaGetDeviceCount failed or returned 0): NCCL context test "
                      "skipped";
    }
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, test::world_rank(), MPI_INFO_NULL, &node);
    int on_node = 1;
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    if (on_node > devices) {
      GTEST_SKIP() << fmt::format("{} ranks share this node's {} visible GPUs; NCCL needs one GPU per rank", on_node,
                                  devices);
    }
  }
};

TEST_F(ParallelContextNccl, GetGroupIsTheNcclCommunicatorAndGetCpuGroupTheMpiOne) {
  const std::int64_t before = Communicator::live_count();
  ParallelContext context(test::richest_config(), MPI_COMM_WORLD, with_backend(Backend::nccl));
  EXPECT_EQ(context.backend(), Backend::nccl);
  EXPECT_EQ(context.device(), context.local_rank_on_node() % visible_device_count());
  for (ParallelMode mode : context.modes()) {
    SCOPED_TRACE(std::string(mode_name(mode)));
    const GroupHandle device = context.get_group(mode);
    const GroupHandle cpu = context.get_cpu_group(mode);
    EXPECT_EQ(device.backend(), Backend::nccl);
    EXPECT_NE(device.nccl(), nullptr);
    EXPECT_EQ(cpu.backend(), Backend::mpi);
    const test::Observed seen = test::observe(cpu.mpi(), static_cast<int>(context.global_rank()));
    EXPECT_EQ(seen.members, context.ranks_in_group(mode));
    EXPECT_GE(context.creation_seconds(mode), context.device_creation_seconds(mode));
  }
  EXPECT_GT(context.device_creation_seconds(ParallelMode::global), 0.0);
  context.destroy();
  EXPECT_EQ(Communicator::live_count(), before);
  EXPECT_THROW((void)context.get_group(ParallelMode::global), StateError);
  EXPECT_NO_THROW(context.destroy());
}

TEST_F(ParallelContextNccl, EveryDeviceGroupSumsTheGlobalRanksOfItsLayoutGroup) {
  ParallelContext context(test::richest_config(), MPI_COMM_WORLD, with_backend(Backend::nccl));
  const std::vector<GroupCheck> checks = context.check_device_groups();
  ASSERT_EQ(checks.size(), context.modes().size());
  for (const GroupCheck& check : checks) {
    EXPECT_TRUE(check.ok()) << check.kind << ": " << check.actual << " != " << check.expected;
  }
}

TEST_F(ParallelContextNccl, BuildAndDestroyCyclesLeaveNoMpiHandleBehind) {
  const ParallelConfig config = test::richest_config();
  const std::int64_t before = Communicator::live_count();
  for (int cycle = 0; cycle < 3; ++cycle) {
    ParallelContext context(config, MPI_COMM_WORLD, with_backend(Backend::nccl));
    context.destroy();
    ASSERT_EQ(Communicator::live_count(), before) << "cycle " << cycle;
  }
  // The destructor frees both kinds too.
  {
    const ParallelContext context(config, MPI_COMM_WORLD, with_backend(Backend::nccl));
  }
  EXPECT_EQ(Communicator::live_count(), before);
}

TEST_F(ParallelContextNccl, AMeshGetsOneNcclCommunicatorPerGroupTokenAndEverySumMatches) {
  // Megatron's embedding groups too: pos_embd leaves every rank but the first stage out.
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"tp", 1}, {"pp", test::world_size()}}, .groups = {"tp", "pp", "embd", "pos_embd"}};
  ParallelContext context(config, MPI_COMM_WORLD, with_backend(Backend::nccl));
  for (const std::string& group : context.kind_names()) {
    SCOPED_TRACE(group);
    if (!context.is_member(group)) {
      EXPECT_THROW((void)context.get_group(group), StateError);
      continue;
    }
    EXPECT_EQ(context.get_group(group).backend(), Backend::nccl);
    EXPECT_EQ(context.get_cpu_group(group).backend(), Backend::mpi);
  }
  const std::vector<GroupCheck> checks = context.check_device_groups();
  EXPECT_EQ(checks.front().kind, "global");  // the NCCL world, which a mesh has no kind for
  for (const GroupCheck& check : checks) {
    EXPECT_TRUE(check.ok()) << check.kind << ": " << check.actual << " != " << check.expected;
  }
}

}  // namespace
}  // namespace pgroups
