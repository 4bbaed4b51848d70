#include "pgroups/cost/bootstrap_cost.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/mesh_config.hpp"

namespace pgroups {
namespace {

Layout mesh_layout(std::string_view mesh) {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims(mesh), {}};
  return Layout(config);
}

// The counts store_traffic.py measured through its proxy (docs/developing/scale.md), less
// the example's own end barrier (2 turns, 9 bytes): 14 turns and 247 bytes at W = 8, 643
// at W = 32.
TEST(BootstrapCost, ARanksReadsAreAConstantAndOneCompactAddressPerPeer) {
  const BootstrapCost small = env_bootstrap_cost(mesh_layout("tp=2,dp=4"));
  EXPECT_EQ(small.round_trips_per_rank, 14 - 2);
  EXPECT_EQ(small.peers_per_rank, 1 + 3);
  EXPECT_EQ(small.bytes_read_per_rank, 247 - 9);
  const BootstrapCost large = env_bootstrap_cost(mesh_layout("tp=2,dp=16"));
  EXPECT_EQ(large.round_trips_per_rank, 14 - 2);
  EXPECT_EQ(large.peers_per_rank, 1 + 15);
  EXPECT_EQ(large.bytes_read_per_rank, 643 - 9);
}

// Only the groups a rank is in: at 131,072 ranks of tp8 cp2 pp8 dp, a rank reads its 8 + 2
// + 8 + 1024 members' addresses, while torch's loop enters every group of every kind.
TEST(BootstrapCost, AtScaleARankReadsItsGroupsWhileTheLoopVisitsEveryGroup) {
  const BootstrapCost cost = env_bootstrap_cost(mesh_layout("tp=8,cp=2,pp=8,dp=1024"));
  EXPECT_EQ(cost.round_trips_per_rank, 12);
  EXPECT_EQ(cost.peers_per_rank, 7 + 1 + 7 + 1023);
  EXPECT_LT(cost.bytes_read_per_rank, 40'000);
  // The groups of tp, cp, pp, dp: 16,384 + 65,536 + 16,384 + 128 groups, three requests each.
  EXPECT_EQ(cost.new_group_loop_requests_per_rank, 3 * (16'384 + 65'536 + 16'384 + 128));
  // One store at its calibrated rate: 22 requests a rank, and the loop's at least 3 a group.
  EXPECT_DOUBLE_EQ(cost.store_seconds, 131'072.0 * 22 / kStoreRequestsPerSecond);
  EXPECT_GT(cost.new_group_loop_seconds, 10'000 * cost.store_seconds);
  // Behind relays of 8: a client's 22 requests and 5 more for each further rank.
  const BootstrapCost relayed = env_bootstrap_cost(mesh_layout("tp=8,cp=2,pp=8,dp=1024"), 8);
  EXPECT_DOUBLE_EQ(relayed.store_seconds, 16'384.0 * (22 + 5 * 7) / kStoreRequestsPerSecond);
}

// A kind that is the whole world costs every rank the world's addresses.
TEST(BootstrapCost, AKindThatIsTheWorldCostsEveryPeer) {
  const BootstrapCost cost = env_bootstrap_cost(mesh_layout("tp=64"));
  EXPECT_EQ(cost.peers_per_rank, 63);
}

}  // namespace
}  // namespace pgroups
