// Ranks that hold different configurations or options never build groups: every rank
// throws the same MismatchError, nobody hangs, and nothing is left allocated.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/layout/agreement_record.hpp"
#include "pgroups/mpi/agreement.hpp"

namespace pgroups {
namespace {

// Builds a context on every rank, the last rank with its own config and options, and
// returns the message of the MismatchError it must throw.
std::string mismatch_message(const std::function<void(ParallelConfig&, ContextOptions&)>& change_last_rank,
                             const ParallelConfig& everyone = {}) {
  ParallelConfig config = everyone;
  ContextOptions options;
  if (test::world_rank() == test::world_size() - 1) change_last_rank(config, options);
  const std::int64_t before = mpi::Communicator::live_count();
  std::string message;
  try {
    const ParallelContext context(config, MPI_COMM_WORLD, options);
    ADD_FAILURE() << "no exception";
  } catch (const MismatchError& error) {
    message = error.what();
  }
  EXPECT_EQ(mpi::Communicator::live_count(), before);
  EXPECT_TRUE(test::same_everywhere(MPI_COMM_WORLD, static_cast<std::int64_t>(mpi::text_hash(message) >> 1)))
      << "ranks threw different messages";
  return message;
}

class ConfigMismatch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::world_size() < 2) GTEST_SKIP() << "needs two ranks";
  }
  std::string last_rank_holds() const { return fmt::format("rank {} holds '", test::world_size() - 1); }
};

TEST_F(ConfigMismatch, ADifferentTensorSizeOnOneRankThrowsMismatchOnEveryRank) {
  const std::string message =
      mismatch_message([](ParallelConfig& c, ContextOptions&) { c.tensor_size = test::world_size(); });
  EXPECT_EQ(message.rfind(fmt::format("configuration mismatch across {} ranks: ", test::world_size()), 0), 0U)
      << message;
  EXPECT_NE(message.find(last_rank_holds() + fmt::format("world_size={} pipeline=1 tensor={} mode=none",
                                                         test::world_size(), test::world_size())),
            std::string::npos)
      << message;
}

TEST_F(ConfigMismatch, ADifferentStrategyIsAMismatch) {
  const std::string message =
      mismatch_message([](ParallelConfig&, ContextOptions& o) { o.strategy = CreationStrategy::per_group; });
  EXPECT_NE(message.find("strategy=per_group'"), std::string::npos) << message;
  EXPECT_NE(message.find("strategy=create_group'"), std::string::npos) << message;
}

TEST_F(ConfigMismatch, ADifferentSeedOrSequenceSwitchIsAMismatch) {
  EXPECT_NE(mismatch_message([](ParallelConfig& c, ContextOptions&) { c.seed = 7; }).find("seed=7"), std::string::npos);
  EXPECT_NE(mismatch_message([](ParallelConfig& c, ContextOptions&) {
              c.legacy_sequence_dp = true;
            }).find("legacy_sequence_dp=true"),
            std::string::npos);
}

TEST_F(ConfigMismatch, AnInvalidConfigOnOneRankIsAMismatchNotAHang) {
  // The odd rank's plan cannot even be built; it must still take part in the agreement.
  const std::string message =
      mismatch_message([](ParallelConfig& c, ContextOptions&) { c.tensor_size = test::world_size() + 1; });
  EXPECT_EQ(message.rfind(fmt::format("configuration mismatch across {} ranks: ", test::world_size()), 0), 0U)
      << message;
  EXPECT_NE(message.find(last_rank_holds() + fmt::format("world_size={} pipeline=1 tensor={} mode=none",
                                                         test::world_size(), test::world_size() + 1)),
            std::string::npos)
      << message;
}

TEST_F(ConfigMismatch, AWrongWorldSizeOnOneRankIsAMismatch) {
  const std::string message =
      mismatch_message([](ParallelConfig& c, ContextOptions&) { c.world_size = 2 * test::world_size(); });
  EXPECT_NE(message.find(last_rank_holds() + fmt::format("world_size={}", 2 * test::world_size())), std::string::npos)
      << message;
}

TEST_F(ConfigMismatch, ThePerRankDeviceIsNotPartOfTheAgreement) {
  ContextOptions options;
  options.device = test::world_rank();
  const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD, options);
  EXPECT_EQ(context.world_size(ParallelMode::global), test::world_size());
}

TEST_F(ConfigMismatch, DifferentAgreedSettingsAreAMismatchNamingBoth) {
  const std::string message =
      mismatch_message([](ParallelConfig&, ContextOptions& o) { o.agreed_settings = "verify format=text"; });
  EXPECT_NE(message.find(last_rank_holds()), std::string::npos) << message;
  EXPECT_NE(message.find("strategy=create_group settings=verify format=text'"), std::string::npos) << message;
}

TEST_F(ConfigMismatch, AnErrorOneRankHitBeforeTheContextIsRaisedByEveryRanksConstructor) {
  // The last rank could not even build its configuration (as Python's ParallelContext
  // after a type error): it meets the other ranks' constructors with its error.
  const int last = test::world_size() - 1;
  const std::int64_t before = mpi::Communicator::live_count();
  std::string message = "no exception";
  try {
    if (test::world_rank() == last) {
      mpi::agree(mpi::Communicator::borrow(MPI_COMM_WORLD), encode_error("ConfigError", "seed 'x' is not an int"),
                 "configuration", mpi::Deadline(std::chrono::seconds(60)));
    } else {
      const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD, ContextOptions{});
    }
  } catch (const ConfigError& error) {
    message = error.what();
  }
  EXPECT_EQ(message, fmt::format("rank {} hit before the configuration agreement: seed 'x' is not an int", last));
  EXPECT_EQ(mpi::Communicator::live_count(), before) << "nothing is left allocated";
}

TEST_F(ConfigMismatch, GroupTokensThatJoinToTheSameTextAreAMismatchNotAHang) {
  // Joined by ',' both lists read "tp,dp": the old text let the ranks agree, then the
  // last rank failed on its invalid token while the others went on to create groups.
  ParallelConfig everyone;
  everyone.mesh = MeshConfig{{{"tp", 1}, {"dp", test::world_size()}}, {"tp", "dp"}};
  const std::string message =
      mismatch_message([](ParallelConfig& c, ContextOptions&) { c.mesh->groups = {"tp,dp"}; }, everyone);
  EXPECT_EQ(message.rfind(fmt::format("configuration mismatch across {} ranks: ", test::world_size()), 0), 0U)
      << message;
  // Both sides read "groups=tp,dp" in the message; the records differ underneath.
  EXPECT_NE(message.find(last_rank_holds() + fmt::format("world_size={}", test::world_size())), std::string::npos)
      << message;
}

TEST_F(ConfigMismatch, ThePerRankTimeoutIsNotPartOfTheAgreement) {
  ContextOptions options;
  options.timeout = std::chrono::seconds(30 + test::world_rank());
  options.agreed_settings = "bench repeats=2";
  const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD, options);
  EXPECT_EQ(context.world_size(ParallelMode::global), test::world_size());
}

}  // namespace
}  // namespace pgroups
