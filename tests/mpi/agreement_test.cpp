// require_identical: one collective when ranks agree; the same MismatchError on every
// rank, naming who holds what, when they do not.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/layout/agreement_record.hpp"
#include "pgroups/mpi/agreement.hpp"
#include "support/error_message.hpp"

namespace pgroups::mpi {
namespace {

TEST(Agreement, IdenticalTextsPass) {
  EXPECT_EQ(test::message_of<Error>([] {
              require_identical(Communicator::borrow(MPI_COMM_WORLD), "pipeline=2 tensor=4", "configuration");
            }),
            "no exception");
}

TEST(Agreement, OneDifferentRankMakesEveryRankThrowTheSameMismatch) {
  const int size = test::world_size();
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  const int odd_one = size - 1;
  const std::string text = test::world_rank() == odd_one ? "tensor=4" : "tensor=2";
  std::string message;
  try {
    require_identical(Communicator::borrow(MPI_COMM_WORLD), text, "configuration");
  } catch (const MismatchError& error) {
    message = error.what();
  }
  const std::string others = size == 2 ? "rank 0 holds" : fmt::format("ranks 0-{} hold", size - 2);
  EXPECT_EQ(message, fmt::format("configuration mismatch across {} ranks: {} 'tensor=2'; rank {} holds 'tensor=4'",
                                 size, others, odd_one));
  EXPECT_TRUE(test::same_everywhere(MPI_COMM_WORLD, static_cast<std::int64_t>(text_hash(message) >> 1)));
}

TEST(Agreement, RanksAreListedAsRunsInOrderOfFirstAppearance) {
  const int size = test::world_size();
  if (size < 4) GTEST_SKIP() << "needs four ranks";
  // Even ranks hold "a", odd ranks "b".
  const std::string text = test::world_rank() % 2 == 0 ? "a" : "b";
  try {
    require_identical(Communicator::borrow(MPI_COMM_WORLD), text, "options");
    FAIL() << "no exception";
  } catch (const MismatchError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind(fmt::format("options mismatch across {} ranks: ranks 0, 2", size), 0), 0U) << message;
    EXPECT_NE(message.find("ranks 1, 3"), std::string::npos) << message;
  }
}

TEST(Agreement, SettingsThatNaiveTextConfusesAreAMismatchOnEveryRank) {
  const int size = test::world_size();
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  // Joined by spaces, both read "a=1 b=2".
  const std::vector<SettingField> one_field = {{"a", "1 b=2"}};
  const std::vector<SettingField> two_fields = {{"a", "1"}, {"b", "2"}};
  const std::string record = encode_settings(test::world_rank() == size - 1 ? two_fields : one_field);
  std::string message = "no exception";
  try {
    agree(Communicator::borrow(MPI_COMM_WORLD), record, "configuration", Deadline(std::chrono::seconds(60)));
  } catch (const MismatchError& error) {
    message = error.what();
  }
  EXPECT_EQ(message.rfind(fmt::format("configuration mismatch across {} ranks: ", size), 0), 0U) << message;
  EXPECT_TRUE(test::same_everywhere(MPI_COMM_WORLD, static_cast<std::int64_t>(text_hash(message) >> 1)));
}

TEST(Agreement, AnErrorOneRankCarriesIsRaisedOnEveryRankWithItsClass) {
  const int size = test::world_size();
  if (size < 2) GTEST_SKIP() << "needs two ranks";
  const std::vector<SettingField> fields = {{"a", "1"}};
  const std::string record =
      test::world_rank() == 1 ? encode_error("ConfigError", "device -1 is invalid") : encode_settings(fields);
  std::string message = "no exception";
  try {
    agree(Communicator::borrow(MPI_COMM_WORLD), record, "configuration", Deadline(std::chrono::seconds(60)));
  } catch (const ConfigError& error) {
    message = error.what();
  }
  EXPECT_EQ(message, "rank 1 hit before the configuration agreement: device -1 is invalid");
}

TEST(Agreement, AnErrorEveryRankCarriesIsRaisedEverywhereToo) {
  const std::string record = encode_error("StateError", "the same on all");
  std::string message = "no exception";
  try {
    agree(Communicator::borrow(MPI_COMM_WORLD), record, "configuration");
  } catch (const StateError& error) {
    message = error.what();
  }
  const int size = test::world_size();
  EXPECT_EQ(message, fmt::format("{} hit before the configuration agreement: the same on all",
                                 size == 1 ? std::string("rank 0") : fmt::format("ranks 0-{}", size - 1)));
}

TEST(Agreement, HashIsFnv1a) {
  EXPECT_EQ(text_hash(""), 14695981039346656037ULL);
  EXPECT_EQ(text_hash("a"), 0xaf63dc4c8601ec8cULL);
}

}  // namespace
}  // namespace pgroups::mpi
