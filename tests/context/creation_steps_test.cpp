// The one list of construction steps (pgroups/context/creation_steps.hpp): what the context
// runs, the CLI's --inject-step accepts and the cost model counts.

#include "pgroups/context/creation_steps.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pgroups/cost/creation_cost.hpp"
#include "support/configs.hpp"

namespace pgroups {
namespace {

std::vector<std::string> names_of(const std::vector<CreationStep>& steps) {
  std::vector<std::string> names;
  for (const CreationStep& step : steps) names.push_back(step.name);
  return names;
}

Layout one_d() {
  ParallelConfig config = test::preset_config(4, 1, 2, TensorMode::tensor_1d);
  return Layout(config);
}

Layout mesh() {
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"tp", 2}, {"dp", 2}, {"pp", 2}}, .groups = {"tp", "tp-dp", "embd"}};
  return Layout(config);
}

TEST(CreationSteps, APresetRunsTheFixedStepsThenEveryModeButGlobal) {
  const std::vector<CreationStep> steps = creation_steps(one_d());
  EXPECT_EQ(names_of(steps),
            (std::vector<std::string>{"duplicate", "agreement", "node", "data", "model", "tensor", "1d"}));
  EXPECT_TRUE(steps[0].waits_without_blocking());
  EXPECT_TRUE(steps[1].waits_without_blocking());
  EXPECT_FALSE(steps[2].waits_without_blocking());
  EXPECT_EQ(steps[3].description, "the creation of mode data");
  EXPECT_EQ(steps[3].group_kind, one_d().find_group_kind("data"));
}

TEST(CreationSteps, TheNcclBackendBindsTheDeviceBeforeTheKindsAndSplitsLast) {
  const std::vector<CreationStep> steps = creation_steps(one_d(), /*with_device=*/true);
  EXPECT_EQ(names_of(steps), (std::vector<std::string>{"duplicate", "agreement", "node", "device", "data", "model",
                                                       "tensor", "1d", "nccl"}));
  EXPECT_EQ(steps.back().kind, StepKind::nccl);
  EXPECT_EQ(steps[3].description, "the binding of a CUDA device");
}

TEST(CreationSteps, AMeshRunsOneStepPerGroupTokenNamedAsGiven) {
  const Layout layout = mesh();
  const std::vector<CreationStep> steps = creation_steps(layout);
  EXPECT_EQ(names_of(steps), (std::vector<std::string>{"duplicate", "agreement", "node", "tp", "tp-dp", "embd"}));
  const CreationStep* step = find_step(steps, "tp-dp");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->kind, StepKind::group);
  EXPECT_EQ(step->description, "the creation of group tp-dp");
  EXPECT_EQ(step->group_kind, layout.find_group_kind("tp-dp"));
  EXPECT_EQ(find_step(steps, "pp"), nullptr);
  EXPECT_EQ(step_names(steps), "duplicate, agreement, node, tp, tp-dp, embd");
}

TEST(CreationSteps, TheCostModelCountsOneCollectivePerStep) {
  for (const Layout& layout : {one_d(), mesh()}) {
    const auto steps = static_cast<std::int64_t>(creation_steps(layout).size());
    for (const CreationCost& cost : creation_costs(layout)) {
      if (cost.algorithm == "comm_split" || cost.algorithm == "create_group") {
        EXPECT_EQ(cost.collectives_per_rank, steps) << cost.algorithm;
        EXPECT_EQ(cost.calls_per_rank, steps - 2) << cost.algorithm;  // the duplicate and one per kind
      }
    }
  }
}

}  // namespace
}  // namespace pgroups
