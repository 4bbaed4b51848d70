// Every integer option of every subcommand reads its value as the config readers read
// an integer: plain decimal, exactly. Each bad form is a usage error (exit 2) whose one
// message line names the option and quotes the value as typed; nothing is read in
// another base or clamped.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <ostream>
#include <string>
#include <vector>

#include "support/run_command.hpp"

namespace pgroups {
namespace {

using test::run_command;

// An option and a command line that is valid but for it.
struct IntegerOption {
  std::string name;  // as the message shows it
  std::string flag;  // as given on the command line (may be the short form)
  std::string base;  // the rest of the command line
  bool is_64_bit = true;
};

std::vector<IntegerOption> integer_options() {
  std::vector<IntegerOption> options = {
      {"--world-size", "--world-size", "plan"},
      {"--world-size", "-w", "plan"},
      {"--pipeline", "--pipeline", "plan -w 8"},
      {"--pipeline", "-p", "explain -w 8 --rank 0"},
      {"--tensor", "--tensor", "plan -w 8"},
      {"--tensor", "-t", "explain -w 8 -r 0"},
      {"--depth", "--depth", "plan -w 8 -t 4 -m 2.5d"},
      {"--seed", "--seed", "plan -w 8"},
      {"--rank", "--rank", "explain -w 8"},
      {"--rank", "-r", "explain -w 8"},
      {"--gpus-per-node", "--gpus-per-node", "plan -w 8"},
      {"--gpus-per-node", "--gpus-per-node", "explain -w 8 -r 0"},
      {"--tp", "--tp", "plan -w 8"},
      {"--cp", "--cp", "plan -w 8"},
      {"--ep", "--ep", "plan -w 8"},
      {"--dp", "--dp", "explain -w 8 -r 0"},
      {"--pp", "--pp", "plan -w 8"},
  };
#ifdef PGROUPS_TEST_CLI_WITH_JOBS
  for (const std::string command : {"verify", "bench --model"}) {
    options.push_back({"--pipeline", "--pipeline", command});
    options.push_back({"--tensor", "--tensor", command});
    options.push_back({"--depth", "--depth", command + " -t 4 -m 2.5d"});
    options.push_back({"--seed", "--seed", command});
  }
  options.push_back({"--max-world", "--max-world", "bench --model"});
  options.push_back({"--repeats", "--repeats", "bench --model", false});
  options.push_back({"--inject-stall-rank", "--inject-stall-rank", "verify", false});
  options.push_back({"--inject-exit-rank", "--inject-exit-rank", "verify", false});
#endif
  return options;
}

// A bad value and what its message says after "<option>" (the value quoted as typed,
// escaped).
struct BadValue {
  std::string label;
  std::string text;
  std::string message;  // with {} for the option's name
};

std::vector<BadValue> bad_values() {
  return {
      {"octal_looking", "010", "{}: leading zeros are not allowed in the integer '010'"},
      {"negative_octal_looking", "-010", "{}: leading zeros are not allowed in the integer '-010'"},
      {"double_zero", "00", "{}: leading zeros are not allowed in the integer '00'"},
      {"hex", "0x10", "{}: only decimal numbers are read, found '0x10'"},
      {"upper_hex", "0X1F", "{}: only decimal numbers are read, found '0X1F'"},
      {"octal_prefix", "0o10", "{}: only decimal numbers are read, found '0o10'"},
      {"binary", "0b101", "{}: only decimal numbers are read, found '0b101'"},
      {"exponent", "1e3", "{} must be an integer, found '1e3'"},
      {"fraction", "8.0", "{} must be an integer, found '8.0'"},
      {"plus_sign", "+8", "{} must be an integer, found '+8'"},
      {"double_minus", "--8", "{} must be an integer, found '--8'"},
      {"leading_space", " 8", "{} must be an integer, found ' 8'"},
      {"trailing_space", "8 ", "{} must be an integer, found '8 '"},
      {"tab", "8\t", "{} must be an integer, found '8\\t'"},
      {"separator", "8_0", "{} must be an integer, found '8_0'"},
      {"comma", "1,000", "{} must be an integer, found '1,000'"},
      {"word", "eight", "{} must be an integer, found 'eight'"},
      {"empty", "", "{} must be an integer, found ''"},
      {"fullwidth_digit", "\xef\xbc\x98", "{} must be an integer, found '\\xef\\xbc\\x98'"},
      {"escape_sequence", "\x1b[31m8", "{} must be an integer, found '\\x1b[31m8'"},
      {"newline", "8\n9", "{} must be an integer, found '8\\n9'"},
      {"above_int64", "9223372036854775808", "{} 9223372036854775808 does not fit in a 64-bit integer"},
      {"below_int64", "-9223372036854775809", "{} -9223372036854775809 does not fit in a 64-bit integer"},
      {"twenty_digits", "99999999999999999999", "{} 99999999999999999999 does not fit in a 64-bit integer"},
  };
}

std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

struct Case {
  IntegerOption option;
  BadValue value;
};

// Names the case in test listings (gtest would print the struct's bytes).
void PrintTo(const Case& c, std::ostream* out) { *out << c.option.base << ' ' << c.option.flag << ' ' << c.value.text; }

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const IntegerOption& option : integer_options()) {
    for (const BadValue& value : bad_values()) all.push_back({option, value});
  }
  return all;
}

class CliIntegerOptionValue : public ::testing::TestWithParam<Case> {};

TEST_P(CliIntegerOptionValue, BadFormIsAUsageErrorQuotingTheValueAsTyped) {
  const Case& c = GetParam();
  const auto result =
      run_command(fmt::format("{} {} {} {}", PGROUPS_CLI, c.option.base, c.option.flag, shell_quoted(c.value.text)));
  EXPECT_EQ(result.status, 2) << result.err;
  EXPECT_EQ(result.out, "");
  const std::string expected = fmt::format(fmt::runtime(c.value.message), c.option.name);
  EXPECT_EQ(result.err.rfind("pgroups: error: " + expected + "\n", 0), 0U) << result.err;
}

INSTANTIATE_TEST_SUITE_P(CliEveryOption, CliIntegerOptionValue, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string name = param_info.param.option.base + "_" + param_info.param.option.flag + "_" +
                                              param_info.param.value.label;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(CliIntegerOptions, ThirtyTwoBitOptionsRejectValuesBeyondTheirTypeInsteadOfClamping) {
#ifndef PGROUPS_TEST_CLI_WITH_JOBS
  GTEST_SKIP() << "bench and verify are built with the context only";
#else
  const auto repeats = run_command(fmt::format("{} bench --model --repeats 2147483648", PGROUPS_CLI));
  EXPECT_EQ(repeats.status, 2);
  EXPECT_EQ(repeats.err.rfind("pgroups: error: --repeats 2147483648 is out of range: it must be from -2147483648 to "
                              "2147483647\n",
                              0),
            0U)
      << repeats.err;
  const auto rank = run_command(fmt::format("{} verify --inject-exit-rank -1", PGROUPS_CLI));
  EXPECT_EQ(rank.status, 2);
  EXPECT_EQ(
      rank.err.rfind("pgroups: error: --inject-exit-rank -1 is out of range: it must be from 0 to 2147483647\n", 0), 0U)
      << rank.err;
#endif
}

TEST(CliIntegerOptions, PlainDecimalsAreReadExactlyToTheEndsOfTheirType) {
  EXPECT_EQ(run_command(fmt::format("{} plan -w 8 --seed 9223372036854775807", PGROUPS_CLI)).status, 0);
  EXPECT_EQ(run_command(fmt::format("{} plan -w 8 --seed -9223372036854775808", PGROUPS_CLI)).status, 0);
  EXPECT_EQ(run_command(fmt::format("{} plan -w 8 --seed -0", PGROUPS_CLI)).status, 0);
  const auto json = run_command(fmt::format("{} plan -w 16 -p 2 -t 4 --format json", PGROUPS_CLI));
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find(R"("world_size":16)"), std::string::npos) << json.out;
}

TEST(CliIntegerOptions, LayoutRulesOnWellFormedValuesStayConfigErrors) {
  // A well-formed integer that breaks a rule is judged as in a config file: exit 3.
  const auto zero = run_command(fmt::format("{} plan -w 0", PGROUPS_CLI));
  EXPECT_EQ(zero.status, 3);
  EXPECT_EQ(zero.err, "pgroups: error: world size 0 is invalid: it must be a positive integer\n");
  const auto negative = run_command(fmt::format("{} plan -w 8 -p -2", PGROUPS_CLI));
  EXPECT_EQ(negative.status, 3);
  EXPECT_EQ(negative.err, "pgroups: error: pipeline size -2 is invalid: it must be a positive integer\n");
}

}  // namespace
}  // namespace pgroups
