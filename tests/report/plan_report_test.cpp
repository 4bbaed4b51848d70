// The printers of pgroups/report/plan_report.hpp, in process: one vocabulary for presets
// and meshes (the `kind` column, the layout's summary and kind notes) and the schema
// version of both JSON documents.

#include "pgroups/report/plan_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_json.hpp"
#include "pgroups/report/elided_list.hpp"
#include "pgroups/report/output_size.hpp"
#include "support/configs.hpp"

namespace pgroups {
namespace {

ParallelConfig preset_2d() { return test::preset_config(8, 2, 4, TensorMode::tensor_2d); }

ParallelConfig megatron_mesh() {
  ParallelConfig config;
  config.mesh = MeshConfig{{{"tp", 2}, {"dp", 2}, {"pp", 2}}, {"tp", "pp", "embd"}};
  return config;
}

ParallelConfig sequence(bool legacy) {
  ParallelConfig config;
  config.world_size = 8;
  config.pipeline = 2;
  config.tensor_size = 2;
  config.tensor_mode = TensorMode::sequence;
  config.legacy_sequence_dp = legacy;
  return config;
}

TEST(PlanReport, PlanTextHeadsTheTableKindForPresetsAndMeshesAlike) {
  for (const ParallelConfig& config : {preset_2d(), megatron_mesh()}) {
    const std::string text = report::plan_text(Layout(config));
    EXPECT_NE(text.find("\nkind                     groups       size  groups (ascending by first rank)\n"),
              std::string::npos)
        << text;
  }
}

TEST(PlanReport, PlanTextStartsWithTheLayoutsSummary) {
  EXPECT_EQ(
      report::plan_text(Layout(preset_2d())).rfind("world size 8 = data 1 x pipeline 2 x tensor 4 (2d, q=2)\n\n", 0),
      0U);
  EXPECT_EQ(report::plan_text(Layout(megatron_mesh()))
                .rfind("world size 8 = tp 2 x dp 2 x pp 2 (order tp-dp-pp, first fastest)\n"
                       "embd: the first and last rank of each pp group (Megatron's embedding group)\n\n",
                       0),
            0U);
}

TEST(PlanReport, PlanTextShowsTheSequenceDpNoteOfEitherRule) {
  EXPECT_NE(
      report::plan_text(Layout(sequence(false)))
          .find("\nsequence_dp: all ranks of one pipeline stage (docs/reference/spec.md §3; --legacy-sequence-dp for "
                "Colossal-AI's blocks)\n"),
      std::string::npos);
  EXPECT_NE(report::plan_text(Layout(sequence(true)))
                .find("\nsequence_dp: Colossal-AI's contiguous blocks of W/pipeline ranks (--legacy-sequence-dp)\n"),
            std::string::npos);
}

TEST(PlanReport, ExplainTextHeadsTheTableKindForPresetsAndMeshesAlike) {
  for (const ParallelConfig& config : {preset_2d(), megatron_mesh()}) {
    const std::string text = report::explain_text(Layout(config), 3);
    EXPECT_NE(text.find("\nkind                   local rank         size  group\n"), std::string::npos) << text;
  }
}

TEST(PlanReport, PlanAndExplainJsonCarrySchemaVersionTwo) {
  for (const ParallelConfig& config : {preset_2d(), megatron_mesh()}) {
    const Layout layout(config);
    EXPECT_EQ(report::plan_json(layout).at("schema_version"), 2);
    EXPECT_EQ(report::explain_json(layout, 0).at("schema_version"), 2);
  }
}

TEST(PlanReport, PlanJsonHasKindsAndGroupSizeAndTheDeprecatedKeysHoldTheSameValues) {
  for (const ParallelConfig& config : {preset_2d(), megatron_mesh()}) {
    const nlohmann::json json = report::plan_json(Layout(config));
    ASSERT_TRUE(json.contains("kinds"));
    EXPECT_EQ(json.at("kinds"), json.at("modes"));
    for (const auto& [name, entry] : json.at("kinds").items()) {
      ASSERT_TRUE(entry.contains("group_size")) << name;
      EXPECT_EQ(entry.at("group_size"), entry.at("world_size")) << name;
    }
  }
  // A rank outside every group of a partial kind has a null group size (embd over four
  // pipeline stages leaves out the middle two).
  ParallelConfig deep;
  deep.mesh = MeshConfig{{{"tp", 2}, {"pp", 4}}, {"tp", "pp", "embd"}};
  const nlohmann::json mesh = report::plan_json(Layout(deep));
  const nlohmann::json& embd = mesh.at("kinds").at("embd").at("group_size");
  EXPECT_NE(std::find(embd.begin(), embd.end(), nlohmann::json()), embd.end()) << embd;
  EXPECT_EQ(mesh.at("kinds").at("tp").at("group_size").at(0), 2);
}

TEST(PlanReport, ExplainJsonHasKindsAndGroupSizeAndTheDeprecatedKeysHoldTheSameValues) {
  for (const ParallelConfig& config : {preset_2d(), megatron_mesh()}) {
    const Layout layout(config);
    for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
      const nlohmann::json json = report::explain_json(layout, rank);
      EXPECT_EQ(json.at("kinds"), json.at("modes"));
      for (const auto& [name, entry] : json.at("kinds").items()) {
        if (entry.contains("member")) continue;
        EXPECT_EQ(entry.at("group_size"), entry.at("world_size")) << name;
        EXPECT_EQ(entry.at("group_size"), layout.group_size(*layout.find_group_kind(name))) << name;
      }
    }
  }
}

TEST(PlanReport, JsonConfigIsTheConfigLayersObject) {
  for (const ParallelConfig& config : {preset_2d(), megatron_mesh(), sequence(true)}) {
    const Layout layout(config);
    EXPECT_EQ(report::plan_json(layout).at("config"), config_json(layout));
    EXPECT_EQ(report::explain_json(layout, 1).at("config"), config_json(layout));
  }
}

TEST(PlanReport, ElidedListKeepsTheEndsOfALongList) {
  EXPECT_EQ(report::elided_list(16, [](std::int64_t i) { return i * 2; }, 2), "[0, 2, ..., 28, 30]");
  EXPECT_EQ(report::elided_list(5, [](std::int64_t i) { return i; }, 2), "[0, 1, 2, 3, 4]");
}

TEST(PlanReport, OutputEstimateAboveTheCapNamesWhatAndTheCap) {
  try {
    report::check_output_estimate("the picture", std::int64_t{1} << 20, 8, 256);
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()),
              "the picture of world size 1048576 x 8 group kinds would take about 2048 MiB, more than the cap of "
              "1024 MiB on one output (docs/reference/errors.md); use `pgroups explain --rank R` for one rank, or "
              "fewer ranks "
              "or kinds");
  }
}

}  // namespace
}  // namespace pgroups
