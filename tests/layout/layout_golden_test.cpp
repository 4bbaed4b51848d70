// Every golden layout produced by Colossal-AI's own initializers is reproduced exactly.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "support/error_message.hpp"
#include "support/golden.hpp"
#include "support/invalid_messages.hpp"

namespace pgroups {
namespace {

using test::config_from_golden;
using test::sorted_groups;

class ColossalGolden : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(ColossalGolden, LegacyLayoutReproducesEveryGroupAndLocalRank) {
  const nlohmann::json golden = test::load_json(GetParam());
  ParallelConfig config = config_from_golden(golden.at("config"));
  config.legacy_sequence_dp = true;
  const Layout layout(config);
  EXPECT_EQ(layout.data_parallel_size(), golden.at("data_parallel_size").get<std::int64_t>());

  std::vector<std::string> expected_modes;
  for (const auto& [name, _] : golden.at("modes").items()) expected_modes.push_back(name);
  std::vector<std::string> created;
  for (ParallelMode mode : layout.modes()) created.emplace_back(mode_name(mode));
  std::sort(expected_modes.begin(), expected_modes.end());
  std::sort(created.begin(), created.end());
  EXPECT_EQ(created, expected_modes);

  for (ParallelMode mode : layout.modes()) {
    SCOPED_TRACE(std::string(mode_name(mode)));
    const auto& expected = golden.at("modes").at(std::string(mode_name(mode)));
    const auto groups = layout.groups(mode);
    EXPECT_EQ(sorted_groups(groups),
              sorted_groups(expected.at("groups").get<std::vector<std::vector<std::int64_t>>>()));
    for (std::size_t i = 1; i < groups.size(); ++i) {
      EXPECT_LT(groups[i - 1].front(), groups[i].front());
    }
    const auto local = expected.at("local_rank").get<std::vector<std::int64_t>>();
    const auto sizes = expected.at("world_size").get<std::vector<std::int64_t>>();
    for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
      EXPECT_EQ(layout.local_rank(rank, mode), local[rank]) << "rank " << rank;
      EXPECT_EQ(layout.group_size(mode), sizes[rank]) << "rank " << rank;
      const auto group = layout.group_of(rank, mode);
      EXPECT_EQ(group[static_cast<std::size_t>(local[rank])], rank);
    }
  }
}

// docs/reference/spec.md §3: by default sequence_dp joins the ranks of one pipeline stage across data and
// tensor indices; only the legacy switch reproduces Colossal-AI's contiguous blocks.
class SequenceGolden : public ColossalGolden {};

TEST_P(SequenceGolden, DefaultSequenceDpGroupsOneWholePipelineStage) {
  const nlohmann::json golden = test::load_json(GetParam());
  const Layout layout(config_from_golden(golden.at("config")));
  const std::int64_t tp = layout.tensor_size();
  const std::int64_t pp = layout.pipeline_size();
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
    const std::int64_t stage = (rank / tp) % pp;
    std::vector<std::int64_t> expected;
    for (std::int64_t other = 0; other < layout.world_size(); ++other) {
      if ((other / tp) % pp == stage) expected.push_back(other);
    }
    EXPECT_EQ(layout.group_of(rank, ParallelMode::sequence_dp), expected);
    const std::int64_t d = rank / (tp * pp);
    EXPECT_EQ(layout.local_rank(rank, ParallelMode::sequence_dp), d * tp + rank % tp);
  }
  const bool legacy_agrees = pp == 1 || layout.data_parallel_size() == 1;
  const auto golden_groups =
      golden.at("modes").at("sequence_dp").at("groups").get<std::vector<std::vector<std::int64_t>>>();
  EXPECT_EQ(sorted_groups(layout.groups(ParallelMode::sequence_dp)) == sorted_groups(golden_groups), legacy_agrees);
}

INSTANTIATE_TEST_SUITE_P(GoldenFiles, ColossalGolden, ::testing::ValuesIn(test::golden_files("golden")),
                         test::test_name);
INSTANTIATE_TEST_SUITE_P(GoldenFiles, SequenceGolden, ::testing::ValuesIn(test::golden_files("golden", "sequence")),
                         test::test_name);

class ColossalInvalid : public ::testing::TestWithParam<nlohmann::json> {};

// Each configuration Colossal-AI rejects is rejected too, before any layout exists, with
// the message that names its offending values and the rule they break.
TEST_P(ColossalInvalid, IsRejectedWithTheMessageNamingItsValues) {
  const nlohmann::json& entry = GetParam();
  const auto& cfg = entry.at("config");
  EXPECT_EQ(test::message_of<ConfigError>([&] { const Layout layout(config_from_golden(cfg)); }),
            test::invalid_message(entry.at("note").get<std::string>()))
      << cfg.dump();
}

// The table of expected messages covers golden/invalid.json exactly.
TEST(ColossalInvalidTable, HasOneMessagePerInvalidConfiguration) {
  std::set<std::string> notes;
  for (const auto& entry : test::invalid_cases()) notes.insert(entry.at("note").get<std::string>());
  std::set<std::string> table;
  for (const auto& [note, _] : test::invalid_messages()) table.insert(note);
  EXPECT_EQ(notes, table);
}

INSTANTIATE_TEST_SUITE_P(InvalidJson, ColossalInvalid, ::testing::ValuesIn(test::invalid_cases()),
                         test::invalid_case_name);

}  // namespace
}  // namespace pgroups
