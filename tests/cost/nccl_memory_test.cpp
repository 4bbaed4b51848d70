// The model of NCCL device memory (pgroups/cost/nccl_memory.hpp) over the bill of
// communicators.

#include "pgroups/cost/nccl_memory.hpp"

#include <gtest/gtest.h>

#include "pgroups/layout/mesh_config.hpp"
#include "pgroups/layout/parallel_config.hpp"

namespace pgroups {
namespace {

TEST(NcclEstimate, SumsTheModelOverTheWorldAndEachCreatedSplitByNodes) {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims("tp=2,dp=4"), {"tp", "dp", "tp-dp"}};
  config.gpus_per_node = 2;
  const Layout layout(config);
  const NcclMemoryModel model;
  const NcclEstimate estimate = estimate_nccl_memory(layout, 0);
  EXPECT_EQ(estimate.communicators, 3);  // world (tp-dp too), tp, dp
  EXPECT_EQ(estimate.intra_node, 1);     // tp: ranks 0 and 1 on node 0
  EXPECT_EQ(estimate.inter_node, 2);
  EXPECT_DOUBLE_EQ(estimate.mib, model.larger_mib * 2 + model.two_ranks_mib);
}

}  // namespace
}  // namespace pgroups
