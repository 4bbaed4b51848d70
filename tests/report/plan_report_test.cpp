// The printers of pgroups/report/plan_report.hpp, in process: one vocabulary for presets
// and meshes (the `kind` column, the layout's summary and kind notes) and the schema
// version of both JSON documents.

#include "pgroups/report/plan_report.hpp"

#include <gtest/gtest.h>

#include <string>

#include "pgroups/config/config_json.hpp"
#include "pgroups/layout/error.hpp"
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
  EXPECT_EQ(report::plan_text(Layout(preset_2d())).rfind("world size 8 = data 1 x pipeline 2 x tensor 4 (2d, q=2)\n\n", 0),
            0U);
  EXPECT_EQ(report::plan_text(Layout(megatron_mesh()))
                .rfind("world size 8 = tp 2 x dp 2 x pp 2 (order tp-dp-pp, first fastest)\n"
                       "embd: the first and last rank of each pp group (Megatron's embedding group)\n\n",
                       0),
            0U);
}

TEST(PlanReport, PlanTextShowsTheSequenceDpNoteOfEitherRule) {
  EXPECT_NE(report::plan_text(Layout(sequence(false)))
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

TEST(PlanReport, PlanAndExplainJsonCarrySchemaVersionOne) {
  for (const ParallelConfig& config : {preset_2d(), megatron_mesh()}) {
    const Layout layout(config);
    EXPECT_EQ(report::plan_json(layout).at("schema_version"), 1);
    EXPECT_EQ(report::explain_json(layout, 0).at("schema_version"), 1);
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
              "1024 MiB on one output (docs/reference/errors.md); use `pgroups explain --rank R` for one rank, or fewer ranks "
              "or kinds");
  }
}

}  // namespace
}  // namespace pgroups
