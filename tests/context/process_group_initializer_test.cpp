// The seed's Initializer_* classes under mpirun: for every golden layout of the world
// size, the initializers Colossal-AI's ParallelContext would run create exactly the
// golden groups (Colossal-AI's own output), with its local ranks and sizes, and the
// seed's shapes (one group or a list); bad arguments fail on every rank, naming them,
// through ParallelContext's construction (its agreement, carried errors and timeout).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/context/process_group_initializer.hpp"
#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/node.hpp"
#include "support/golden.hpp"

namespace pgroups {
namespace {

// The initializers Colossal-AI's ParallelContext.init_parallel_groups() runs for `config`.
std::vector<std::unique_ptr<ProcessGroupInitializer>> initializers_for(const ParallelConfig& config,
                                                                       std::int64_t rank) {
  const std::int64_t w = config.world_size;
  const std::int64_t p = config.pipeline;
  const std::int64_t t = config.tensor_size;
  const std::int64_t dp = w / (p * t);
  std::vector<std::unique_ptr<ProcessGroupInitializer>> all;
  all.push_back(std::make_unique<Initializer_Data>(rank, w, config, dp, p, t));
  all.push_back(std::make_unique<Initializer_Model>(rank, w, config, dp, p, t));
  all.push_back(std::make_unique<Initializer_Tensor>(rank, w, config, dp, p, t));
  if (p > 1) all.push_back(std::make_unique<Initializer_Pipeline>(rank, w, config, dp, p, t));
  switch (config.tensor_mode) {
    case TensorMode::tensor_1d: all.push_back(std::make_unique<Initializer_1D>(rank, w, config, dp, p, t)); break;
    case TensorMode::tensor_2d: all.push_back(std::make_unique<Initializer_2D>(rank, w, config, dp, p, t)); break;
    case TensorMode::tensor_2p5d:
      all.push_back(std::make_unique<Initializer_2p5D>(rank, w, config, dp, p, t, *config.depth));
      break;
    case TensorMode::tensor_3d: all.push_back(std::make_unique<Initializer_3D>(rank, w, config, dp, p, t)); break;
    case TensorMode::sequence: all.push_back(std::make_unique<Initializer_Sequence>(rank, w, config, dp, p, t)); break;
    case TensorMode::none: break;
  }
  return all;
}

class InitializerGolden : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(InitializerGolden, EveryInitializerCreatesColossalGroups) {
  const nlohmann::json golden = test::load_json(GetParam());
  ParallelConfig config = test::config_from_golden(golden.at("config"));
  if (config.world_size != test::world_size()) GTEST_SKIP() << "for a world of " << config.world_size << " ranks";
  config.legacy_sequence_dp = true;  // the golden files hold Colossal-AI's blocks
  const int me = test::world_rank();

  std::set<std::string> covered{"global"};
  for (const auto& initializer : initializers_for(config, me)) {
    SCOPED_TRACE(std::string(initializer->name()));
    const std::vector<DistGroup> groups = initializer->create_dist_groups();
    ASSERT_EQ(groups.size(), initializer->modes().size());
    for (const DistGroup& group : groups) {
      const std::string mode(mode_name(group.mode));
      SCOPED_TRACE(mode);
      covered.insert(mode);
      const nlohmann::json& expected = golden.at("modes").at(mode);
      const test::Observed seen = test::observe(group.process_group.get(), me);
      const auto golden_groups = expected.at("groups").get<std::vector<std::vector<std::int64_t>>>();
      EXPECT_NE(std::find(golden_groups.begin(), golden_groups.end(), seen.members), golden_groups.end())
          << "observed group " << ::testing::PrintToString(seen.members) << " is not a golden group";
      EXPECT_EQ(seen.rank, expected.at("local_rank").at(me).get<std::int64_t>());
      EXPECT_EQ(seen.size, expected.at("world_size").at(me).get<std::int64_t>());
      EXPECT_EQ(group.local_rank, seen.rank);
      EXPECT_EQ(group.group_world_size, seen.size);
      EXPECT_EQ(group.ranks_in_group, seen.members);
      EXPECT_TRUE(group.process_group.owns());
    }
  }
  std::set<std::string> expected_modes;
  for (const auto& [name, _] : golden.at("modes").items()) expected_modes.insert(name);
  EXPECT_EQ(covered, expected_modes);
}

INSTANTIATE_TEST_SUITE_P(GoldenFiles, InitializerGolden, ::testing::ValuesIn(test::golden_files("golden")),
                         test::test_name);

// The seed's return shapes: a single-group initializer gives one group, the others a list.
TEST(ProcessGroupInitializer, SeedShapesOneGroupOrAList) {
  const int w = test::world_size();
  const int me = test::world_rank();
  ParallelConfig config;
  const DistGroup data = Initializer_Data(me, w, config, w, 1, 1).init_dist_group();
  EXPECT_EQ(data.mode, ParallelMode::data);
  EXPECT_EQ(data.group_world_size, w);
  EXPECT_EQ(data.local_rank, me);
  const DistGroup one_d = Initializer_1D(me, w, config, 1, 1, w).init_dist_group();
  EXPECT_EQ(one_d.mode, ParallelMode::tensor_1d);
  const std::vector<DistGroup> sequence = Initializer_Sequence(me, w, config, 1, 1, w).init_dist_group();
  ASSERT_EQ(sequence.size(), 2U);
  EXPECT_EQ(sequence[0].mode, ParallelMode::sequence);
  EXPECT_EQ(sequence[1].mode, ParallelMode::sequence_dp);
}

// A wrong data-parallel size is every rank's error: the same ConfigError everywhere,
// naming the sizes, and no rank is left in a collective (the test would hang).
TEST(ProcessGroupInitializer, WrongDataParallelSizeFailsOnEveryRankNamingTheSizes) {
  const int w = test::world_size();
  try {
    (void)Initializer_Data(test::world_rank(), w, ParallelConfig{}, w + 1, 1, 1).init_dist_group();
    FAIL() << "no ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("data parallel size " + std::to_string(w + 1)), std::string::npos)
        << error.what();
  }
}

// A wrong rank argument on one rank is carried into the context's agreement: every rank
// throws that rank's ConfigError, and nobody hangs.
TEST(ProcessGroupInitializer, WrongRankArgumentOnOneRankFailsEveryRankWithThatRanksError) {
  const int w = test::world_size();
  const int me = test::world_rank();
  const std::int64_t given = me == 0 ? w + 5 : me;
  const std::int64_t before = mpi::Communicator::live_count();
  try {
    (void)Initializer_Data(given, w, ParallelConfig{}, w, 1, 1).init_dist_group();
    FAIL() << "nothing thrown";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              fmt::format("rank 0 hit before the configuration agreement: rank {} given to Initializer_Data is not "
                          "this process's rank 0 in the communicator",
                          w + 5));
  }
  EXPECT_EQ(mpi::Communicator::live_count(), before);
}

// A wrong world-size argument on every rank: the same carried ConfigError everywhere.
TEST(ProcessGroupInitializer, WrongWorldSizeArgumentFailsEveryRankNamingBothSizes) {
  const int w = test::world_size();
  try {
    (void)Initializer_Model(test::world_rank(), w + 1, ParallelConfig{}, w + 1, 1, 1).init_dist_group();
    FAIL() << "no ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              fmt::format("{} hit before the configuration agreement: world size {} given to Initializer_Model is "
                          "not the communicator's size {}",
                          w == 1 ? "rank 0" : fmt::format("ranks 0-{}", w - 1), w + 1, w));
  }
}

// Ranks constructing different classes are a mismatch of the context's agreement, with
// its text: the class and its modes are agreed on with the configuration.
TEST(ProcessGroupInitializer, DifferentClassesOnTheRanksAreAMismatchOnEveryRank) {
  const int w = test::world_size();
  const int me = test::world_rank();
  const ParallelConfig config;
  const Initializer_Data data(me, w, config, w, 1, 1);
  const Initializer_Model model(me, w, config, w, 1, 1);
  const ProcessGroupInitializer& mine = me == 0 ? static_cast<const ProcessGroupInitializer&>(model) : data;
  try {
    (void)mine.create_dist_groups();
    FAIL() << "no MismatchError";
  } catch (const MismatchError& error) {
    ContextOptions options;
    options.share_communicators = false;
    const std::string node =
        mpi::node_info_from_launcher(mpi::Communicator::borrow(MPI_COMM_WORLD)) ? "launcher" : "shared_memory_split";
    options.agreed_settings = "initializer=Initializer_Model modes=model";
    const std::string rank0 = agreement_text(model.plan_config(), options, node);
    options.agreed_settings = "initializer=Initializer_Data modes=data";
    const std::string others = agreement_text(data.plan_config(), options, node);
    EXPECT_EQ(std::string(error.what()),
              fmt::format("configuration mismatch across {} ranks: rank 0 holds '{}'; {} '{}'", w, rank0,
                          w == 2 ? "rank 1 holds" : fmt::format("ranks 1-{} hold", w - 1), others));
  }
}

// The construction is ParallelContext's: its steps, by name, restricted to the modes the
// class creates.
TEST(ProcessGroupInitializer, RunsTheContextsStepsForItsOwnModesOnly) {
  const int w = test::world_size();
  if (w % 2 != 0) GTEST_SKIP() << "needs an even world";
  ParallelConfig config;
  std::vector<std::string> seen;
  ContextOptions options;
  options.before_step = [&seen](std::string_view step) { seen.emplace_back(step); };
  const std::vector<DistGroup> groups =
      Initializer_Pipeline(test::world_rank(), w, config, w / 2, 2, 1).init_dist_group(MPI_COMM_WORLD, options);
  EXPECT_EQ(seen, (std::vector<std::string>{"duplicate", "agreement", "node", "pipe"}));
  ASSERT_EQ(groups.size(), 1U);
  EXPECT_EQ(groups[0].group_world_size, 2);
}

// A kind selected alone gets a communicator that works, whichever kind owns its partition
// in the whole plan. (Not yet shown to fail without the selection-aware sharing: the
// owning kind of tensor_1d's partition in this plan was not checked.)
TEST(ProcessGroupInitializer, AKindSelectedWithoutItsPartitionsOwnerCreatesAWorkingCommunicator) {
  const int w = test::world_size();
  if (w % 2 != 0 || w < 4) GTEST_SKIP() << "needs an even world of 4 or more";
  ParallelConfig config;
  const DistGroup group = Initializer_1D(test::world_rank(), w, config, w / 2, 1, 2).init_dist_group(MPI_COMM_WORLD);
  ASSERT_NE(group.process_group.get(), MPI_COMM_NULL);
  const test::Observed seen = test::observe(group.process_group.get(), test::world_rank());
  EXPECT_EQ(seen.size, 2);
  EXPECT_EQ(seen.rank, group.local_rank);
  EXPECT_EQ(seen.members, group.ranks_in_group);
}

// A rank late for the agreement makes every rank throw the context's TimeoutError.
TEST(ProcessGroupInitializer, ARankLateForTheAgreementMakesEveryRankThrowTheContextsTimeout) {
  const int w = test::world_size();
  if (w > 4) GTEST_SKIP() << "the wait is spent on small worlds only";
  const int me = test::world_rank();
  ContextOptions options;
  options.timeout = std::chrono::seconds(1);
  if (me == w - 1) {
    options.before_step = [](std::string_view step) {
      if (step == "agreement") std::this_thread::sleep_for(std::chrono::seconds(2));
    };
  }
  const std::int64_t before = mpi::Communicator::live_count();
  try {
    (void)Initializer_Data(me, w, ParallelConfig{}, w, 1, 1).init_dist_group(MPI_COMM_WORLD, options);
    FAIL() << "no TimeoutError";
  } catch (const TimeoutError& error) {
    EXPECT_EQ(std::string(error.what()),
              mpi::timeout_message(std::chrono::seconds(1), {"agreement", "the configuration agreement"}, me, w));
  }
  EXPECT_EQ(mpi::Communicator::live_count(), before);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(ProcessGroupInitializer, PipelineOfSizeOneIsAStateError) {
  const int w = test::world_size();
  try {
    (void)Initializer_Pipeline(test::world_rank(), w, ParallelConfig{}, w, 1, 1).init_dist_group();
    FAIL() << "no StateError";
  } catch (const StateError& error) {
    EXPECT_NE(std::string(error.what()).find("the pipeline size is 1"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pgroups
