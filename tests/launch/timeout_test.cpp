// The timeout of group creation: how --timeout and PGROUPS_TIMEOUT text is read, and
// which of the option, the environment and the default is in effect.

#include "pgroups/launch/timeout.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using mpi_free_clock = std::chrono::steady_clock;

std::string parse_error(const std::string& text) {
  try {
    static_cast<void>(parse_timeout_seconds(text, "--timeout"));
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "no exception";
}

// Sets PGROUPS_TIMEOUT for one test and restores the environment after it.
class EnvironmentTimeout : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* value = std::getenv(kTimeoutEnvironmentVariable)) saved_ = value;
    ::unsetenv(kTimeoutEnvironmentVariable);
  }
  void TearDown() override {
    if (saved_) {
      ::setenv(kTimeoutEnvironmentVariable, saved_->c_str(), 1);
    } else {
      ::unsetenv(kTimeoutEnvironmentVariable);
    }
  }
  static void set(const char* value) { ::setenv(kTimeoutEnvironmentVariable, value, 1); }

 private:
  std::optional<std::string> saved_;
};

TEST(TimeoutText, WholeAndFractionalSecondsBecomeMilliseconds) {
  EXPECT_EQ(parse_timeout_seconds("5", "--timeout"), seconds(5));
  EXPECT_EQ(parse_timeout_seconds("0.25", "--timeout"), milliseconds(250));
  EXPECT_EQ(parse_timeout_seconds("1e3", "--timeout"), seconds(1000));
  EXPECT_EQ(parse_timeout_seconds("1000000000", "--timeout"), seconds(1'000'000'000));
}

TEST(TimeoutText, ZeroMeansNoTimeoutAndATinyValueIsNotZero) {
  EXPECT_EQ(parse_timeout_seconds("0", "--timeout"), milliseconds(0));
  EXPECT_EQ(parse_timeout_seconds("0.0001", "--timeout"), milliseconds(1));
}

TEST(TimeoutText, NegativeValuesAreRejectedNamingTheSourceAndText) {
  EXPECT_EQ(parse_error("-1"), "--timeout '-1' is not a valid timeout: it must not be negative (0 = no timeout)");
}

TEST(TimeoutText, TextThatIsNotANumberOfSecondsIsRejected) {
  for (const char* text : {"", "soon", "5s", " 5", "5 ", "+5", "nan", "0x10"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parse_error(text), std::string("--timeout '") + text +
                                     "' is not a valid timeout: expected a number of seconds (0 = no timeout)");
  }
}

TEST(TimeoutText, ValuesBeyondABillionSecondsAreRejected) {
  for (const char* text : {"1e10", "inf", "1e999"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parse_error(text),
              std::string("--timeout '") + text + "' is not a valid timeout: it must be at most 1000000000 seconds");
  }
}

TEST(TimeoutText, AnUnderflowIsTooSmallNotTooLarge) {
  for (const char* text : {"1e-400", "0.1e-999", "1e-99999"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parse_error(text), std::string("--timeout '") + text +
                                     "' is not a valid timeout: it is too small: below the smallest number read "
                                     "(about 1e-308); 0.001 is the shortest timeout, 1 ms (0 = no timeout)");
  }
  // Past the range on the negative side is negative, whichever way.
  EXPECT_EQ(parse_error("-1e-400"),
            "--timeout '-1e-400' is not a valid timeout: it must not be negative (0 = no timeout)");
  EXPECT_EQ(parse_error("-1e400"),
            "--timeout '-1e400' is not a valid timeout: it must not be negative (0 = no timeout)");
  // Small but representable values are rounded up to 1 ms, never to "no timeout".
  EXPECT_EQ(parse_timeout_seconds("1e-300", "--timeout"), milliseconds(1));
}

TEST_F(EnvironmentTimeout, WithoutOptionOrEnvironmentTheDefaultIsFiveMinutes) {
  EXPECT_EQ(kDefaultTimeout, seconds(300));
  EXPECT_EQ(resolve_timeout(std::nullopt), kDefaultTimeout);
  set("");
  EXPECT_EQ(resolve_timeout(std::nullopt), kDefaultTimeout) << "an empty variable counts as unset";
}

TEST_F(EnvironmentTimeout, TheEnvironmentAppliesWhenNoTimeoutIsGiven) {
  set("7.5");
  EXPECT_EQ(resolve_timeout(std::nullopt), milliseconds(7500));
  set("0");
  EXPECT_EQ(resolve_timeout(std::nullopt), milliseconds(0));
}

TEST_F(EnvironmentTimeout, AnExplicitTimeoutBeatsTheEnvironment) {
  set("7");
  EXPECT_EQ(resolve_timeout(seconds(2)), seconds(2));
  EXPECT_EQ(resolve_timeout(milliseconds(0)), milliseconds(0));
}

TEST_F(EnvironmentTimeout, AMalformedEnvironmentValueIsAConfigErrorNamingTheVariable) {
  set("ten");
  EXPECT_EQ(test::message_of<ConfigError>([&] { static_cast<void>(resolve_timeout(std::nullopt)); }),
            "PGROUPS_TIMEOUT 'ten' is not a valid timeout: expected a number of seconds (0 = no timeout)");
  // Not read at all when the timeout is explicit.
  EXPECT_EQ(resolve_timeout(seconds(1)), seconds(1));
}

TEST_F(EnvironmentTimeout, ANegativeExplicitTimeoutIsAConfigError) {
  EXPECT_EQ(test::message_of<ConfigError>([&] { static_cast<void>(resolve_timeout(milliseconds(-5))); }),
            "timeout -5 ms is invalid: it must not be negative (0 = no timeout)");
}

TEST(TimeoutVocabulary, ZeroMeansNoTimeoutEverywhere) {
  EXPECT_FALSE(is_limited(milliseconds(0)));
  EXPECT_FALSE(is_limited(milliseconds(-1)));
  EXPECT_TRUE(is_limited(milliseconds(1)));
  EXPECT_EQ(wait_limit(seconds(5)), seconds(5));
  // No timeout becomes a wait as long as the cap, not an immediate expiry.
  EXPECT_EQ(wait_limit(milliseconds(0)), kLargestTimeout);
  EXPECT_EQ(kDefaultTimeout, seconds(300));
}

TEST(TimeoutCap, TheCapItselfIsAcceptedInEveryForm) {
  EXPECT_EQ(kLargestTimeout, seconds(1'000'000'000));
  EXPECT_EQ(timeout_from_seconds(kLargestTimeoutSeconds, "timeout"), kLargestTimeout);
  EXPECT_EQ(parse_timeout_seconds("1e9", "--timeout"), kLargestTimeout);
  EXPECT_EQ(resolve_timeout(kLargestTimeout), kLargestTimeout);
  EXPECT_EQ(resolve_timeout_text("1000000000", "--timeout"), kLargestTimeout);
  // A deadline at the cap lies in the future and does not wrap round.
  const mpi_free_clock::time_point now = mpi_free_clock::now();
  EXPECT_GT(deadline_after(now, kLargestTimeout), now + std::chrono::hours(24 * 365 * 31));
}

TEST(TimeoutCap, JustOverTheCapIsAConfigErrorNamingTheCap) {
  const auto message = [](auto&& call) {
    try {
      static_cast<void>(call());
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(message([] { return timeout_from_seconds(1e9 + 0.001, "timeout"); }),
            "timeout 1000000000.001 is not a valid timeout: it must be at most 1000000000 seconds");
  EXPECT_EQ(message([] { return resolve_timeout(kLargestTimeout + milliseconds(1)); }),
            "timeout 1000000000001 ms is invalid: it must be at most 1000000000000 ms (1000000000 seconds)");
  EXPECT_EQ(message([] { return resolve_timeout_text("1000000000.001", "--timeout"); }),
            "--timeout '1000000000.001' is not a valid timeout: it must be at most 1000000000 seconds");
  EXPECT_EQ(message([] { return timeout_from_seconds(-0.5, "timeout"); }),
            "timeout -0.5 is not a valid timeout: it must not be negative (0 = no timeout)");
}

TEST(TimeoutCap, DeadlineArithmeticSaturatesInsteadOfOverflowing) {
  using Clock = mpi_free_clock;
  const Clock::time_point now = Clock::now();
  EXPECT_EQ(deadline_after(now, milliseconds::max()), Clock::time_point::max());
  EXPECT_EQ(deadline_after(Clock::time_point::max() - milliseconds(1), seconds(1)), Clock::time_point::max());
  EXPECT_EQ(deadline_after(now, milliseconds(0)), now) << "no timeout: no deadline to add";
  EXPECT_EQ(deadline_after(now, seconds(2)), now + seconds(2));
}

TEST(TimeoutVocabulary, DurationsAreShownInSeconds) {
  EXPECT_EQ(seconds_text(seconds(300)), "300 s");
  EXPECT_EQ(seconds_text(milliseconds(250)), "0.25 s");
  EXPECT_EQ(seconds_text(milliseconds(20)), "0.02 s");
}

TEST(TimeoutVocabulary, OneMessageNamesWhatStepAndRankWhenKnown) {
  EXPECT_EQ(timeout_message(seconds(5), "the checks of the communicators", "check", 2, 4),
            "timed out after 5 s waiting for all ranks at the checks of the communicators (step 'check', rank 2 of 4)");
  EXPECT_EQ(timeout_message(milliseconds(1500), "ncclCommSplit of communicator 'pipe' from 'global' (colour 1, key 0)"),
            "timed out after 1.5 s waiting for all ranks at ncclCommSplit of communicator 'pipe' from 'global' (colour "
            "1, key 0)");
  EXPECT_EQ(timeout_message(seconds(1), "the node query", "node"),
            "timed out after 1 s waiting for all ranks at the node query (step 'node')");
}

TEST(TimeoutVocabulary, MissingRanksAreNamedOnlyWhereTheTransportKnowsThem) {
  const std::vector<int> missing = {3, 5, 6, 7};
  EXPECT_EQ(timeout_message(seconds(5), "the configuration agreement", "agreement", 0, 8, missing),
            "timed out after 5 s waiting for all ranks at the configuration agreement (step 'agreement', rank 0 of "
            "8): ranks 3, 5-7 did not arrive");
  const std::vector<int> one = {2};
  EXPECT_EQ(timeout_message(seconds(1), "the configuration agreement", "agreement", 0, 4, one),
            "timed out after 1 s waiting for all ranks at the configuration agreement (step 'agreement', rank 0 of "
            "4): rank 2 did not arrive");
  EXPECT_EQ(timeout_message(seconds(1), "the configuration agreement", "agreement", 0, 4, {}),
            timeout_message(seconds(1), "the configuration agreement", "agreement", 0, 4));
}

}  // namespace
}  // namespace pgroups
