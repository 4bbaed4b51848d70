#pragma once
// Loading the golden layouts of tests/data for parametrised tests.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "pgroups/layout/parallel_config.hpp"

namespace pgroups::test {

inline std::filesystem::path data_dir() { return PGROUPS_TEST_DATA_DIR; }

/// The golden layouts of one folder of tests/data, sorted; only names containing
/// `contains` when it is given.
inline std::vector<std::filesystem::path> golden_files(const std::string& folder, const std::string& contains = "") {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() / folder)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".json" && name.front() == 'w' && name.find(contains) != std::string::npos) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline nlohmann::json load_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

/// The golden layouts of `folder` whose config.world_size is at most `largest_world`, for
/// tests that build each one live on that many ranks.
inline std::vector<std::filesystem::path> golden_files_up_to(const std::string& folder, std::int64_t largest_world) {
  std::vector<std::filesystem::path> files;
  for (const auto& path : golden_files(folder)) {
    if (load_json(path).at("config").at("world_size").get<std::int64_t>() <= largest_world) files.push_back(path);
  }
  return files;
}

/// The "config" object of a golden file or of invalid.json, as a ParallelConfig.
inline ParallelConfig config_from_golden(const nlohmann::json& config) {
  ParallelConfig c;
  c.world_size = config.at("world_size").get<std::int64_t>();
  c.pipeline = config.at("pipeline").get<std::int64_t>();
  const auto& tensor = config.at("tensor");
  c.tensor_size = tensor.at("size").get<std::int64_t>();
  if (tensor.contains("mode") && !tensor.at("mode").is_null()) {
    c.tensor_mode = parse_tensor_mode(tensor.at("mode").get<std::string>());
  }
  if (tensor.contains("depth")) c.depth = tensor.at("depth").get<std::int64_t>();
  return c;
}

/// Groups as a sorted list, so that two layouts compare as sets of groups.
inline std::vector<std::vector<std::int64_t>> sorted_groups(std::vector<std::vector<std::int64_t>> groups) {
  std::sort(groups.begin(), groups.end());
  return groups;
}

/// A name usable as a GoogleTest parameter name.
inline std::string test_name(const ::testing::TestParamInfo<std::filesystem::path>& info) {
  const std::filesystem::path& path = info.param;
  std::string name = path.stem().string();
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

/// Checks a plan in docs/reference/spec.md §4's schema (from `plan --format json` or `verify --format
/// json`) against a golden layout: same config, data-parallel size and modes; per mode
/// the same groups as a set, listed ascending by first rank, and the same local ranks
/// and group sizes. Extra keys are allowed, as docs/reference/spec.md §4 says.
inline void expect_plan_equals_golden(const nlohmann::json& plan, const nlohmann::json& golden) {
  nlohmann::json config = plan.at("config");
  config.erase("legacy_sequence_dp");
  EXPECT_EQ(config, golden.at("config"));
  EXPECT_EQ(plan.at("data_parallel_size"), golden.at("data_parallel_size"));
  ASSERT_EQ(plan.at("kinds").size(), golden.at("modes").size());
  for (const auto& [name, expected] : golden.at("modes").items()) {
    SCOPED_TRACE(name);
    const auto& actual = plan.at("kinds").at(name);
    const auto groups = actual.at("groups").get<std::vector<std::vector<std::int64_t>>>();
    EXPECT_EQ(sorted_groups(groups),
              sorted_groups(expected.at("groups").get<std::vector<std::vector<std::int64_t>>>()));
    EXPECT_TRUE(std::is_sorted(groups.begin(), groups.end())) << "groups must be ascending by first rank";
    EXPECT_EQ(actual.at("local_rank"), expected.at("local_rank"));
    EXPECT_EQ(actual.at("group_size"), expected.at("world_size"));
  }
}

/// The entries of golden/invalid.json: configurations Colossal-AI rejects.
inline std::vector<nlohmann::json> invalid_cases() {
  std::vector<nlohmann::json> entries;
  for (const auto& entry : load_json(data_dir() / "golden" / "invalid.json")) entries.push_back(entry);
  return entries;
}

/// A parameter name from an invalid case's note: "2d tensor size 2" -> "2d_tensor_size_2".
inline std::string invalid_case_name(const ::testing::TestParamInfo<nlohmann::json>& info) {
  std::string name = std::to_string(info.index) + "_" + info.param.value("note", "");
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

}  // namespace pgroups::test
