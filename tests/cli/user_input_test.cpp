// No sentinel from the user, text read whole, and options that do not apply said so
// (docs/reference/errors.md, "Input rules").

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/run_command.hpp"
#include "support/temp_files.hpp"

namespace pgroups {
namespace {

namespace fs = std::filesystem;
using test::run_command;

TEST(UserSizes, AZeroWorldSizeOnTheCommandLineIsAnErrorWithAMeshToo) {
  for (const std::string extra : {"", "--mesh tp=2,dp=2", "--order tp-dp --tp 2 --dp 2"}) {
    const auto result = run_command(fmt::format("{} plan -w 0 {}", PGROUPS_CLI, extra));
    EXPECT_EQ(result.status, 3) << extra;
    EXPECT_EQ(result.err, "pgroups: error: world size 0 is invalid: it must be a positive integer\n") << extra;
  }
}

TEST(UserSizes, AZeroWorldSizeInAFileIsAnErrorInEveryFormat) {
  const test::TempDir files;
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"z.toml", "[parallel]\nworld_size = 0\n"},
                                   {"z.json", "{\"parallel\": {\"world_size\": 0}}\n"},
                                   {"z.py", "parallel = dict(world_size=0)\n"}}) {
    const fs::path path = files.write(name, text);
    for (const std::string extra : {"", "--mesh tp=2,dp=2"}) {
      const auto result = run_command(fmt::format("{} plan --config {} {}", PGROUPS_CLI, path.string(), extra));
      EXPECT_EQ(result.status, 3) << name << extra;
      EXPECT_NE(result.err.find("parallel.world_size 0 is invalid: it must be a positive integer"), std::string::npos)
          << name << ": " << result.err;
    }
  }
}

TEST(UserText, AnEmptyGroupTokenInAListIsAnErrorAsAnEmptyGroup) {
  for (const std::string groups : {"tp,,dp", "tp,", ",dp", "''"}) {
    const auto result = run_command(fmt::format("{} plan --mesh tp=2,dp=2 --group {}", PGROUPS_CLI, groups));
    EXPECT_EQ(result.status, 3) << groups;
    EXPECT_EQ(result.err, "pgroups: error: a group token is empty; write dimension names joined by '-', e.g. tp-dp\n")
        << groups;
  }
  const auto fine = run_command(fmt::format("{} plan --mesh tp=2,dp=2 --group tp,dp --group tp-dp", PGROUPS_CLI));
  EXPECT_EQ(fine.status, 0) << fine.err;
}

TEST(UserText, MeshOrderAndGroupsInAFileAreReadWhole) {
  const test::TempDir files;
  const std::string a(300, 'a');
  const std::string b(300, 'b');
  const std::string json =
      fmt::format(R"({{"mesh": {{"order": "{0}-{1}", "{0}": 2, "{1}": 2, "groups": ["{1}-{0}"]}}}})", a, b);
  const std::string toml = fmt::format("[mesh]\norder = \"{0}-{1}\"\n{0} = 2\n{1} = 2\ngroups = [\"{1}-{0}\"]\n", a, b);
  const std::string py = fmt::format("mesh = dict(order='{0}-{1}', {0}=2, {1}=2, groups=['{1}-{0}'])\n", a, b);
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"long.json", json}, {"long.toml", toml}, {"long.py", py}}) {
    const fs::path path = files.write(name, text);
    const auto result = run_command(fmt::format("{} plan --config {} --format json", PGROUPS_CLI, path.string()));
    EXPECT_EQ(result.status, 0) << name << ": " << result.err;
    EXPECT_NE(result.out.find(fmt::format("\"{}-{}\"", b, a)), std::string::npos) << name;
  }
}

#ifdef PGROUPS_TEST_CLI_WITH_MPI
TEST(UserOptions, MaxWorldWithAMeshSaysItDoesNotApply) {
  const auto result = run_command(fmt::format("{} bench --model --mesh tp=2,dp=2 --max-world 64", PGROUPS_CLI));
  EXPECT_EQ(result.status, 3);
  EXPECT_EQ(result.err,
            "pgroups: error: --max-world does not apply to a mesh: a mesh fixes its world (W=4, the "
            "product of its sizes), so the model has one row; leave --max-world out\n");
  EXPECT_EQ(run_command(fmt::format("{} bench --model --mesh tp=2,dp=2", PGROUPS_CLI)).status, 0);
}
#endif

}  // namespace
}  // namespace pgroups
