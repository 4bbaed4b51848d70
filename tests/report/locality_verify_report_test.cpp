// The locality and verify reports of the report layer, in process and without MPI: the
// values the CLI gathers in, the text and JSON it prints out.

#include <gtest/gtest.h>

#include <string>

#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/report/locality_report.hpp"
#include "pgroups/report/verify_report.hpp"

namespace pgroups {
namespace {

Layout one_d(std::int64_t world, std::int64_t tensor) {
  ParallelConfig config;
  config.world_size = world;
  config.tensor_size = tensor;
  config.tensor_mode = TensorMode::tensor_1d;
  return Layout(config);
}

TEST(LocalityReport, TensorGroupsAcrossNodesAreWarnedWithoutTheCliPrefix) {
  const Layout layout = one_d(8, 4);
  const report::LocalityReport across = report::planned_locality(layout, 2);
  EXPECT_EQ(report::locality_json(across).at("modes").at("tensor"),
            nlohmann::json({{"groups_within_node", 0}, {"groups_across_nodes", 2}}));
  const std::vector<std::string> warnings = report::locality_report_warnings(layout, across);
  ASSERT_FALSE(warnings.empty());
  EXPECT_EQ(warnings.front().find("pgroups: warning"), std::string::npos) << "the CLI adds its prefix";
  EXPECT_TRUE(report::locality_report_warnings(layout, report::planned_locality(layout, 4)).empty());
}

TEST(LocalityReport, TheConfigurationsGpusPerNodeIsThePlannedOne) {
  ParallelConfig config;
  config.world_size = 8;
  config.gpus_per_node = 4;
  EXPECT_EQ(report::planned_locality(Layout(config))->nodes.node_count(), 2);
  config.gpus_per_node.reset();
  EXPECT_FALSE(report::planned_locality(Layout(config)).has_value());
}

TEST(VerifyReport, AFailedKindIsCountedInTheVerdictAndMarkedInItsRow) {
  const Layout layout = one_d(4, 2);
  report::VerifyRun run{.layout = layout,
                        .strategy = "create_group",
                        .backend = "mpi",
                        .share_communicators = true,
                        .create_seconds = 0.5,
                        .bill = largest_communicator_bill(layout),
                        .modes = {},
                        .device = {},
                        .ok = false};
  for (const GroupKind& kind : layout.group_kinds()) {
    run.modes.push_back({.group = kind.name,
                         .create_seconds = 0.1,
                         .ok = kind.name != "tensor",
                         .local_ranks = {},
                         .sizes = {},
                         .groups = {}});
  }
  const std::string text = report::verify_report_text(run);
  EXPECT_NE(text.find("\nFAIL: 1 of " + std::to_string(run.modes.size()) + " group kinds differ from the layout"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("FAIL\n"), std::string::npos) << text;
  const nlohmann::json json = report::verify_report_json(run);
  EXPECT_EQ(json.at("ok"), false);
  EXPECT_EQ(json.at("modes").at("tensor").at("ok"), false);
  EXPECT_EQ(json.at("backend"), "mpi");
  EXPECT_FALSE(json.at("communicators").contains("nccl_created"));
}

TEST(VerifyReport, JsonHasSchemaVersionTwoKindsAndGroupSizeBesideTheDeprecatedKeys) {
  const Layout layout = one_d(4, 2);
  report::VerifyRun run{.layout = layout,
                        .strategy = "split",
                        .backend = "mpi",
                        .share_communicators = true,
                        .create_seconds = 0.5,
                        .bill = largest_communicator_bill(layout),
                        .modes = {},
                        .device = {},
                        .ok = true};
  for (const GroupKind& kind : layout.group_kinds()) {
    run.modes.push_back({.group = kind.name,
                         .create_seconds = 0.1,
                         .ok = true,
                         .local_ranks = {0, 1, 0, 1},
                         .sizes = {2, 2, 2, 2},
                         .groups = {}});
  }
  const nlohmann::json json = report::verify_report_json(run);
  EXPECT_EQ(json.at("schema_version"), 2);
  EXPECT_EQ(json.at("kinds"), json.at("modes"));
  EXPECT_EQ(json.at("kinds").at("tensor").at("group_size"), (nlohmann::json{2, 2, 2, 2}));
  EXPECT_EQ(json.at("kinds").at("tensor").at("world_size"), json.at("kinds").at("tensor").at("group_size"));
}

TEST(LocalityReport, JsonHasKindsBesideTheDeprecatedModes) {
  const Layout layout = one_d(8, 4);
  const nlohmann::json json = report::locality_json(report::planned_locality(layout, 2));
  ASSERT_TRUE(json.contains("kinds"));
  EXPECT_EQ(json.at("kinds"), json.at("modes"));
  EXPECT_EQ(json.at("kinds").at("tensor").at("groups_across_nodes"), 2);
}

}  // namespace
}  // namespace pgroups
