// The locality and verify reports of the report layer, in process and without MPI: the
// values the CLI gathers in, the text and JSON it prints out.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

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

// A verify run of every kind of `layout`, each created in 0.1 s and seen by every rank as
// `local_ranks` and `sizes`; `failed` names the one kind whose check failed ("" for none).
report::VerifyRun every_kind_verified(const Layout& layout, std::string_view strategy, const std::string& failed,
                                      std::vector<int> local_ranks = {}, std::vector<int> sizes = {}) {
  report::VerifyRun run{.layout = layout,
                        .strategy = strategy,
                        .backend = "mpi",
                        .share_communicators = true,
                        .create_seconds = 0.5,
                        .bill = largest_communicator_bill(layout),
                        .kinds = {},
                        .device = {},
                        .ok = failed.empty()};
  for (const GroupKind& kind : layout.group_kinds()) {
    run.kinds.push_back({.kind = kind.name,
                         .create_seconds = 0.1,
                         .ok = kind.name != failed,
                         .local_ranks = local_ranks,
                         .sizes = sizes,
                         .groups = {}});
  }
  return run;
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
  const report::VerifyRun run = every_kind_verified(layout, "create_group", "tensor");
  const std::string text = report::verify_report_text(run);
  EXPECT_NE(text.find("\nFAIL: 1 of " + std::to_string(run.kinds.size()) + " group kinds differ from the layout"),
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
  const report::VerifyRun run = every_kind_verified(layout, "split", "", {0, 1, 0, 1}, {2, 2, 2, 2});
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
