// Communicator economy on live MPI communicators (docs/using/context.md, "Communicator economy"): kinds of one
// partition share one communicator, a kind equal to the world is the world's duplicate, the kinds of one-rank groups
// share one local communicator; every kind still answers under its own name, each communicator carries the names of the
// kinds it serves, destroy frees each once, and sharing off gives every kind its own. Runs on 8 ranks (the issue's
// mesh).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/mpi/communicator.hpp"
#include "support/configs.hpp"

namespace pgroups {
namespace {

using mpi::Communicator;

ParallelConfig issue_mesh() {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims("tp=2,cp=1,ep=1,dp=4"), {"tp", "cp", "ep", "dp", "tp-cp", "dp-cp", "tp-dp"}};
  return config;
}

std::string name_of(MPI_Comm comm) {
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  MPI_Comm_get_name(comm, name, &length);
  return {name, static_cast<std::size_t>(length)};
}

class ContextSharing : public ::testing::TestWithParam<CreationStrategy> {
 protected:
  void SetUp() override {
    if (test::world_size() != 8) GTEST_SKIP() << "the issue's mesh needs 8 ranks";
  }
};

TEST_P(ContextSharing, EqualPartitionsShareOneCommunicatorAndEveryKindAnswersForItself) {
  ContextOptions options;
  options.strategy = GetParam();
  const std::int64_t before = Communicator::live_count();
  ParallelContext context(issue_mesh(), MPI_COMM_WORLD, options);
  // The world's duplicate, tp, dp, and the one local communicator cp and ep share.
  EXPECT_EQ(Communicator::live_count(), before + 4);
  EXPECT_EQ(context.communicator_bill(), (CommunicatorBill{7, 3, 2, 3}));
  EXPECT_EQ(context.get_group("tp-cp").mpi(), context.get_group("tp").mpi());
  EXPECT_EQ(context.get_group("dp-cp").mpi(), context.get_group("dp").mpi());
  EXPECT_NE(context.get_group("tp").mpi(), context.get_group("dp").mpi());
  // Each kind's handle still carries its own name, and every query answers for it.
  EXPECT_EQ(context.get_group("tp-cp").group(), "tp-cp");
  for (const std::string& kind : context.kind_names()) {
    SCOPED_TRACE(kind);
    const test::Observed seen = test::observe(context.get_group(kind).mpi(), test::world_rank());
    EXPECT_EQ(seen.rank, context.local_rank(kind));
    EXPECT_EQ(seen.size, context.world_size(kind));
    EXPECT_EQ(seen.members, context.ranks_in_group(kind));
  }
  // One-rank kinds: a communicator of this rank alone, not the world's or MPI_COMM_SELF itself.
  for (const char* kind : {"cp", "ep"}) {
    const MPI_Comm comm = context.get_group(kind).mpi();
    int size = 0;
    MPI_Comm_size(comm, &size);
    EXPECT_EQ(size, 1);
    EXPECT_NE(comm, MPI_COMM_SELF);
  }
  // Every one-rank kind of a rank shares one, as on torch and NCCL.
  EXPECT_EQ(context.get_group("cp").mpi(), context.get_group("ep").mpi());
  // The whole-world kind is the world's duplicate, with the names of what it serves.
  const MPI_Comm world = context.get_group("tp-dp").mpi();
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(world, MPI_COMM_WORLD, &result);
  EXPECT_EQ(result, MPI_CONGRUENT);
  EXPECT_EQ(name_of(world), "pgroups tp-dp");
  EXPECT_EQ(name_of(context.get_group("tp").mpi()), "pgroups tp,tp-cp");
  EXPECT_EQ(name_of(context.get_group("dp").mpi()), "pgroups dp,dp-cp");
  EXPECT_EQ(name_of(context.get_group("cp").mpi()), "pgroups cp,ep");
  context.destroy();
  EXPECT_EQ(Communicator::live_count(), before);  // each freed once, the world never
  int world_size = 0;
  EXPECT_EQ(MPI_Comm_size(MPI_COMM_WORLD, &world_size), MPI_SUCCESS);
}

TEST_P(ContextSharing, SharingOffGivesEveryKindItsOwnCommunicator) {
  ContextOptions options;
  options.strategy = GetParam();
  options.share_communicators = false;
  const std::int64_t before = Communicator::live_count();
  ParallelContext context(issue_mesh(), MPI_COMM_WORLD, options);
  EXPECT_EQ(Communicator::live_count(), before + 8);  // the duplicate and 7 kinds
  EXPECT_EQ(context.communicator_bill(), (CommunicatorBill{7, 3, 2, 6}));
  EXPECT_NE(context.get_group("tp-cp").mpi(), context.get_group("tp").mpi());
  for (const std::string& kind : context.kind_names()) {
    const test::Observed seen = test::observe(context.get_group(kind).mpi(), test::world_rank());
    EXPECT_EQ(seen.members, context.ranks_in_group(kind));
  }
  context.destroy();
  EXPECT_EQ(Communicator::live_count(), before);
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, ContextSharing, ::testing::ValuesIn(kAllCreationStrategies),
                         [](const ::testing::TestParamInfo<CreationStrategy>& strategy) {
                           return std::string(strategy_name(strategy.param));
                         });

TEST(ContextSharingAgreement, RanksThatDisagreeOnSharingAllThrowMismatchError) {
  ContextOptions options;
  options.share_communicators = test::world_rank() != 0;
  ParallelConfig config;
  config.world_size = test::world_size();
  try {
    const ParallelContext context(config, MPI_COMM_WORLD, options);
    if (test::world_size() > 1) FAIL() << "no exception";
  } catch (const MismatchError& error) {
    EXPECT_NE(std::string(error.what()).find("communicators=separate"), std::string::npos) << error.what();
  }
}

TEST(ContextSharingPresets, OneDimensionalTensorOverTheWorldCreatesOnlyTheWorld) {
  ParallelConfig config = test::preset_config(test::world_size(), 1, test::world_size(), TensorMode::tensor_1d);
  const ParallelContext context(config, MPI_COMM_WORLD);
  EXPECT_EQ(context.communicator_bill().created, 1);
  EXPECT_EQ(context.get_group(ParallelMode::tensor).mpi(), context.get_group(ParallelMode::global).mpi());
  EXPECT_EQ(context.get_group(ParallelMode::tensor_1d).mpi(), context.get_group(ParallelMode::global).mpi());
}

TEST(ContextSharingPresets, LegacySequenceDataParallelOfTensorsBlocksSharesTensorsCommunicator) {
  if (test::world_size() != 8) GTEST_SKIP() << "the case needs 8 ranks";
  // pipeline 2, sequence 4: the legacy blocks of W/pipeline = 4 ranks are tensor's groups,
  // found equal by their partition keys although another mesh makes them.
  ParallelConfig config = test::preset_config(8, 2, 4, TensorMode::sequence);
  config.legacy_sequence_dp = true;
  const ParallelContext context(config, MPI_COMM_WORLD);
  EXPECT_EQ(context.get_group(ParallelMode::sequence_dp).mpi(), context.get_group(ParallelMode::tensor).mpi());
  EXPECT_EQ(context.communicator_bill().distinct, 3);
  EXPECT_EQ(context.ranks_in_group(ParallelMode::sequence_dp), context.view().members(context.view().kind("tensor")));
}

TEST(ContextSharingMeshes, EmbeddingOfTwoStagesSharesThePipelinesCommunicator) {
  if (test::world_size() != 8) GTEST_SKIP() << "the case needs 8 ranks";
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims("tp=2,dp=2,pp=2"), {"tp", "pp", "embd"}};
  const ParallelContext context(config, MPI_COMM_WORLD);
  EXPECT_TRUE(context.is_member("embd"));
  EXPECT_EQ(context.get_group("embd").mpi(), context.get_group("pp").mpi());
  EXPECT_EQ(context.communicator_bill(), (CommunicatorBill{3, 2, 0, 3}));
}

}  // namespace
}  // namespace pgroups
