// `pgroups plan` as a user runs it: JSON equal to every golden layout, text output, and
// clean non-zero exits for every invalid configuration.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "support/golden.hpp"
#include "support/invalid_messages.hpp"
#include "support/run_command.hpp"

namespace pgroups {
namespace {

using test::run_command;

std::string plan_flags(const nlohmann::json& config) {
  const auto& tensor = config.at("tensor");
  std::string flags = fmt::format("--world-size {} --pipeline {} --tensor {}", config.at("world_size").get<long>(),
                                  config.at("pipeline").get<long>(), tensor.at("size").get<long>());
  if (tensor.contains("mode") && !tensor.at("mode").is_null())
    flags += " --mode " + tensor.at("mode").get<std::string>();
  if (tensor.contains("depth")) flags += fmt::format(" --depth {}", tensor.at("depth").get<long>());
  return flags;
}

class PlanGolden : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(PlanGolden, JsonOutputEqualsTheGoldenLayout) {
  const nlohmann::json golden = test::load_json(GetParam());
  const auto result = run_command(
      fmt::format("{} plan {} --legacy-sequence-dp --format json", PGROUPS_CLI, plan_flags(golden.at("config"))));
  ASSERT_EQ(result.status, 0) << result.err;
  test::expect_plan_equals_golden(nlohmann::json::parse(result.out), golden);
}

INSTANTIATE_TEST_SUITE_P(GoldenFiles, PlanGolden, ::testing::ValuesIn(test::golden_files("golden")), test::test_name);

class PlanInvalid : public ::testing::TestWithParam<nlohmann::json> {};

TEST_P(PlanInvalid, ExitsWithTheConfigErrorStatusAndTheOneLineMessage) {
  const nlohmann::json& config = GetParam().at("config");
  const auto result = run_command(fmt::format("{} plan {}", PGROUPS_CLI, plan_flags(config)));
  EXPECT_EQ(result.status, 3) << result.err;
  EXPECT_TRUE(result.out.empty());
  EXPECT_EQ(result.err, "pgroups: error: " + test::invalid_message(GetParam().at("note").get<std::string>()) + "\n");
}

INSTANTIATE_TEST_SUITE_P(InvalidJson, PlanInvalid, ::testing::ValuesIn(test::invalid_cases()), test::invalid_case_name);

TEST(PlanCommand, TextShowsSizesAndEveryModeWithItsGroups) {
  const auto result = run_command(fmt::format("{} plan -w 8 -p 2 -t 4 -m 2d", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("world size 8 = data 1 x pipeline 2 x tensor 4 (2d, q=2)"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("2d_col                        4          2  [0, 2]"), std::string::npos) << result.out;
}

TEST(PlanCommand, HugeWorldsPrintElidedTextAndRefuseJson) {
  const auto text = run_command(fmt::format("{} plan -w 1073741824 -p 16 -t 64 -m 3d", PGROUPS_CLI));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("... 1048569 more"), std::string::npos) << text.out;
  const auto json = run_command(fmt::format("{} plan -w 1073741824 -p 16 -t 64 -m 3d --format json", PGROUPS_CLI));
  EXPECT_EQ(json.status, 3);
  EXPECT_NE(json.err.find("too large for --format json"), std::string::npos) << json.err;
}

TEST(PlanCommand, MissingWorldSizeAndUnknownFlagsAreUsageErrors) {
  const auto missing = run_command(fmt::format("{} plan -p 2", PGROUPS_CLI));
  EXPECT_EQ(missing.status, 3);
  EXPECT_NE(missing.err.find("world size is missing"), std::string::npos) << missing.err;
  const auto unknown = run_command(fmt::format("{} plan -w 8 --pipline 2", PGROUPS_CLI));
  EXPECT_EQ(unknown.status, 2);
  const auto not_a_number = run_command(fmt::format("{} plan -w eight", PGROUPS_CLI));
  EXPECT_EQ(not_a_number.status, 2);
}

TEST(PlanCommand, UnknownModeSuggestsTheSpellingFix) {
  const auto result = run_command(fmt::format("{} plan -w 8 -t 4 -m 2D", PGROUPS_CLI));
  EXPECT_EQ(result.status, 3);
  EXPECT_NE(result.err.find("did you mean 2d?"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace pgroups
