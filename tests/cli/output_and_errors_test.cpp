// What every command prints, as a user sees it: output that cannot be written (a full
// disk, a closed pipe) is an error with status 5 rather than a silent success; error
// lines never carry raw control characters or unbounded values; silent defaults of the
// command line (an empty --config) are errors.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/run_command.hpp"

namespace pgroups {
namespace {

using test::run_command;

// The pgroups command with a TMPDIR of this test process's own. `verify` without mpirun
// is a singleton MPI job, and Open MPI creates its session directory under TMPDIR: two
// singletons of tests that CTest runs at the same time would race to create the same one
// ("mkdir ... File exists", orte_init fails).
std::string pgroups_cli() {
  static const std::string command = [] {
    const std::filesystem::path dir =
        std::filesystem::path(PGROUPS_CLI).parent_path() / "test-tmp" / std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    return fmt::format("TMPDIR={} {}", dir.string(), PGROUPS_CLI);
  }();
  return command;
}

// One successful invocation of each command that prints on standard output.
std::vector<std::string> printing_commands() {
  std::vector<std::string> commands = {
      "plan -w 8 -p 2 -t 2",
      "plan -w 8 -p 2 -t 2 --format json",
      "explain -w 8 -p 2 -t 2 --rank 3",
      "explain -w 8 -p 2 -t 2 --rank 3 --format json",
      "info",
      "info --format json",
      "plan --help",
  };
#ifdef PGROUPS_TEST_CLI_WITH_JOBS
  commands.push_back("bench --model -p 2 -t 2");
  commands.push_back("bench --model -p 2 -t 2 --format json");
#endif
#ifdef PGROUPS_TEST_CLI_WITH_MPI
  // Without mpirun: a singleton MPI job of one rank.
  commands.push_back("verify");
  commands.push_back("verify --format json");
#endif
  return commands;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class CliEveryPrintingCommand : public ::testing::TestWithParam<std::string> {};

TEST_P(CliEveryPrintingCommand, SucceedsWhenItsOutputArrives) {
  const auto result = run_command(fmt::format("{} {}", pgroups_cli(), GetParam()));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_FALSE(result.out.empty());
}

TEST_P(CliEveryPrintingCommand, AFullDiskIsAnIoErrorWithOneLine) {
  const auto result = run_command(fmt::format("{} {} > /dev/full", pgroups_cli(), GetParam()));
  EXPECT_EQ(result.status, 5) << result.err;
  EXPECT_NE(result.err.find("pgroups: error: cannot write the output to standard output: No space left on device\n"),
            std::string::npos)
      << result.err;
}

TEST_P(CliEveryPrintingCommand, AClosedPipeIsAnIoErrorNotASilentSuccess) {
  // The reader (`true`) is gone before pgroups writes; its status comes back on stderr.
  // Whether the shell ignores SIGPIPE or not, pgroups reports EPIPE itself.
  for (const std::string trap : {"", "trap '' PIPE; "}) {
    const auto result = run_command(
        fmt::format("bash -c \"{}(sleep 0.3; {} {}; echo status=\\$? >&2) | true\"", trap, pgroups_cli(), GetParam()));
    EXPECT_NE(result.err.find("pgroups: error: cannot write the output to standard output: Broken pipe\nstatus=5\n"),
              std::string::npos)
        << trap << result.err;
  }
}

INSTANTIATE_TEST_SUITE_P(CliCommands, CliEveryPrintingCommand, ::testing::ValuesIn(printing_commands()), test_name);

TEST(CliErrorLines, ControlCharactersInValuesAreEscaped) {
  // printf makes the bytes: the shell popen runs need not know $'...'.
  const auto mode = run_command(fmt::format("{} plan -w 8 -t 4 -m \"$(printf '2d\\033[31m\\r\\nz')\"", pgroups_cli()));
  EXPECT_EQ(mode.status, 3);
  EXPECT_EQ(mode.err,
            "pgroups: error: unknown tensor mode '2d\\x1b[31m\\r\\nz'; the mode must be one of none, 1d, 2d, 2.5d, "
            "3d, sequence\n");
  const auto flag = run_command(fmt::format("{} plan -w 8 \"$(printf -- '--x\\033]0;title\\007')\"", pgroups_cli()));
  EXPECT_EQ(flag.status, 2);
  EXPECT_EQ(flag.err.find('\x1b'), std::string::npos) << flag.err;
  EXPECT_EQ(flag.err.find('\x07'), std::string::npos) << flag.err;
  EXPECT_NE(flag.err.find("--x\\x1b]0;title\\x07"), std::string::npos) << flag.err;
  const auto path =
      run_command(fmt::format("{} plan -w 8 --config \"$(printf '/nonexistent/\\033[2J.toml')\"", pgroups_cli()));
  EXPECT_EQ(path.status, 5);
  EXPECT_EQ(path.err, "pgroups: error: configuration file '/nonexistent/\\x1b[2J.toml' does not exist\n");
}

TEST(CliErrorLines, LongValuesAreCut) {
  const std::string long_value(100'000, 'x');
  const auto mode = run_command(fmt::format("{} plan -w 8 -m {}", pgroups_cli(), long_value));
  EXPECT_EQ(mode.status, 3);
  EXPECT_EQ(mode.err, "pgroups: error: unknown tensor mode '" + std::string(40, 'x') +
                          "'...; the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence\n");
  const auto number = run_command(fmt::format("{} plan -w {}", pgroups_cli(), std::string(100'000, '7')));
  EXPECT_EQ(number.status, 2);
  EXPECT_EQ(number.err.rfind(
                "pgroups: error: --world-size " + std::string(40, '7') + "... does not fit in a 64-bit integer\n", 0),
            0U)
      << number.err.substr(0, 300);
  const auto flag = run_command(fmt::format("{} plan -w 8 --{}", pgroups_cli(), long_value));
  EXPECT_EQ(flag.status, 2);
  EXPECT_LT(flag.err.size(), 1200U);
  EXPECT_EQ(std::count(flag.err.begin(), flag.err.end(), '\n'), 2) << flag.err.substr(0, 300);
}

TEST(CliSilentDefaults, AnEmptyConfigPathIsAnError) {
  const auto result = run_command(fmt::format("{} plan -w 8 --config ''", pgroups_cli()));
  EXPECT_EQ(result.status, 5);
  EXPECT_EQ(result.err,
            "pgroups: error: --config was given an empty path: name a .toml, .json or .py file, or leave --config "
            "out to use the flags alone\n");
  EXPECT_EQ(result.out, "");
}

TEST(CliCheckedArithmetic, CostModelOfHugeWorldsIsAConfigErrorNotAnOverflow) {
#ifndef PGROUPS_TEST_CLI_WITH_JOBS
  GTEST_SKIP() << "bench is built with the context only";
#else
  // Worlds double up to --max-world: the last ones have more groups than 64 bits count.
  const auto result = run_command(fmt::format("{} bench --model --max-world 9223372036854775807", pgroups_cli()));
  EXPECT_EQ(result.status, 3) << result.err;
  EXPECT_EQ(result.err,
            "pgroups: error: the creation cost of a world of 2305843009213693952 ranks does not fit in a 64-bit "
            "integer\n");
  const auto product = run_command(fmt::format("{} bench --model -p 4294967296 -t 4294967296", pgroups_cli()));
  EXPECT_EQ(product.status, 3);
  EXPECT_EQ(product.err, "pgroups: error: pipeline size 4294967296 * tensor size 4294967296 overflows 64 bits\n");
  const auto small = run_command(fmt::format("{} bench --model -p 4 --max-world 2", pgroups_cli()));
  EXPECT_EQ(small.status, 3);
  EXPECT_EQ(small.err,
            "pgroups: error: --max-world 2 is smaller than the smallest world of the configuration, pipeline 4 * "
            "tensor 1 = 4\n");
  const auto largest = run_command(fmt::format("{} bench --model --max-world 1152921504606846976", pgroups_cli()));
  EXPECT_EQ(largest.status, 0) << largest.err;
  EXPECT_NE(largest.out.find("1152921504606846976"), std::string::npos);
#endif
}

}  // namespace
}  // namespace pgroups
