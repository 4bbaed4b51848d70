// require_success_everywhere: nothing when every rank succeeded; otherwise every rank
// throws, the failed ones their own error, the others a BackendError naming them and
// the first one's message.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/outcome.hpp"
#include "support/error_message.hpp"

namespace pgroups::mpi {
namespace {

std::exception_ptr failure(const std::string& message) { return std::make_exception_ptr(ConfigError(message)); }

TEST(Outcome, NothingHappensWhenEveryRankSucceeded) {
  EXPECT_EQ(test::message_of<Error>(
                [] { require_success_everywhere(Communicator::borrow(MPI_COMM_WORLD), nullptr, "opening the file"); }),
            "no exception");
}

TEST(Outcome, TheFailedRankRethrowsItsOwnErrorAndTheOthersNameIt) {
  const int size = test::world_size();
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  const int failed = size - 1;
  const bool me = test::world_rank() == failed;
  try {
    require_success_everywhere(Communicator::borrow(MPI_COMM_WORLD), me ? failure("no such file 'x'") : nullptr,
                               "opening the file");
    ADD_FAILURE() << "no exception";
  } catch (const ConfigError& error) {
    EXPECT_TRUE(me);
    EXPECT_STREQ(error.what(), "no such file 'x'");
  } catch (const BackendError& error) {
    EXPECT_FALSE(me);
    EXPECT_EQ(std::string(error.what()),
              fmt::format("opening the file failed on rank {}; rank {}: no such file 'x'", failed, failed));
  }
}

TEST(Outcome, SeveralFailedRanksAreListedAsRunsWithTheLowestOnesMessage) {
  const int size = test::world_size();
  if (size < 4) GTEST_SKIP() << "needs four ranks";
  // Ranks 1 and 2 fail, each with its own message.
  const int rank = test::world_rank();
  const bool me = rank == 1 || rank == 2;
  std::string message;
  try {
    require_success_everywhere(Communicator::borrow(MPI_COMM_WORLD),
                               me ? failure(fmt::format("disk of rank {} is full", rank)) : nullptr, "writing");
  } catch (const Error& error) {
    message = error.what();
  }
  EXPECT_EQ(message, me ? fmt::format("disk of rank {} is full", rank)
                        : std::string("writing failed on ranks 1-2; rank 1: disk of rank 1 is full"));
}

TEST(Outcome, RankRunsJoinConsecutiveRanks) {
  EXPECT_EQ(rank_runs(std::vector<int>{0, 1, 2, 5, 7, 8, 9}), "0-2, 5, 7-9");
  EXPECT_EQ(rank_runs(std::vector<int>{3}), "3");
  EXPECT_EQ(rank_runs(std::vector<int>{}), "");
}

}  // namespace
}  // namespace pgroups::mpi
