// The store emulation plays the env bootstrap's creation request for request: on pgroups'
// real store server, in a process of its own, its turns and bytes per rank are the cost
// model's (which the counting proxy checks against real processes: scale.md), a relay
// carries its ranks on one connection, NCCL's ids cost one read per group, and torch's
// loop costs three turns per group.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/cost/bootstrap_cost.hpp"
#include "pgroups/emulation.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/mesh_config.hpp"

namespace pgroups {
namespace {

Layout mesh_layout(const std::string& mesh, std::int64_t world) {
  ParallelConfig config;
  config.world_size = world;
  config.mesh = MeshConfig{parse_mesh_dims(mesh), {}};
  return Layout(config);
}

EmulationResult emulate(const Layout& layout, EmulatedTraffic traffic, std::int64_t ranks_per_client = 1,
                        std::int64_t loop_groups = 0) {
  const StoreServerProcess server;
  EmulationOptions options;
  options.traffic = traffic;
  options.port = server.port();
  options.ranks_per_client = ranks_per_client;
  options.loop_groups = loop_groups;
  options.silence_limit = std::chrono::milliseconds(30000);
  return emulate_store_traffic(layout, options);
}

TEST(StoreTrafficEmulation, TheGlooCreationMakesTheModelsTurnsAndBytesPerRank) {
  for (const std::int64_t world : {8, 32, 128}) {
    const Layout layout = mesh_layout(fmt::format("tp=2,dp={}", world / 2), world);
    const BootstrapCost model = env_bootstrap_cost(layout);
    const EmulationResult result = emulate(layout, EmulatedTraffic::gloo);
    EXPECT_EQ(result.connections, world);
    // Every rank alike, whether it came before rank 0 opened the attempt or after.
    EXPECT_EQ(result.most_round_trips, model.round_trips_per_rank) << "W=" << world;
    EXPECT_EQ(result.median_round_trips, static_cast<double>(model.round_trips_per_rank)) << "W=" << world;
    EXPECT_EQ(result.most_bytes_read, model.bytes_read_per_rank) << "W=" << world;
    // Rank 0 and the last to come ask other things, as many.
    EXPECT_EQ(result.requests, model.requests_per_rank * world) << "W=" << world;
  }
}

TEST(StoreTrafficEmulation, ARelayCarriesItsRanksOnOneConnectionAndKeepsTheirPairsOffTheStore) {
  const Layout layout = mesh_layout("tp=8,dp=8", 64);
  const EmulationResult alone = emulate(layout, EmulatedTraffic::gloo);
  const EmulationResult relayed = emulate(layout, EmulatedTraffic::gloo, 8);
  EXPECT_EQ(relayed.connections, 8);
  EXPECT_EQ(relayed.ranks, 64);
  // The tensor groups are the relays' own ranks: no address of theirs travels.
  EXPECT_LT(relayed.bytes_sent, alone.bytes_sent / 2);
  EXPECT_LT(relayed.requests, alone.requests / 2);
  EXPECT_LE(relayed.most_round_trips, alone.most_round_trips);
}

TEST(StoreTrafficEmulation, NcclIdsCostEachRankTheSameBytesAtAnyWorld) {
  const EmulationResult small = emulate(mesh_layout("tp=8,cp=2,pp=8,dp=2", 256), EmulatedTraffic::nccl);
  const EmulationResult large = emulate(mesh_layout("tp=8,cp=2,pp=8,dp=16", 2048), EmulatedTraffic::nccl);
  // Its groups' ids, one per group, and the agreements' constants: the world's size is not in it.
  EXPECT_EQ(small.median_bytes_read, large.median_bytes_read);
  EXPECT_EQ(small.median_round_trips, large.median_round_trips);
  // The dp group's id alone is 128 bytes: a rank reads at least its 4 kinds' but its own.
  EXPECT_GT(large.median_bytes_read, 3 * 128);
}

// Megatron's kinds, embd and pos_embd among them: a rank outside a partial kind's groups
// has no share of it.
TEST(StoreTrafficEmulation, PartialKindsCostOnlyTheirMembers) {
  ParallelConfig config;
  config.world_size = 256;
  config.mesh = MeshConfig{parse_mesh_dims("tp=8,cp=2,pp=8,dp=2"),
                           {"tp", "cp", "pp", "dp", "dp-cp", "tp-pp", "embd", "pos_embd"}};
  const EmulationResult result = emulate(Layout(config), EmulatedTraffic::nccl);
  EXPECT_EQ(result.ranks, 256);
  EXPECT_EQ(result.most_round_trips, 12);
  // A middle stage's rank reads fewer ids than a first stage's, which is in embd and pos_embd.
  EXPECT_LT(result.median_bytes_read, static_cast<double>(result.most_bytes_read));
}

TEST(StoreTrafficEmulation, TorchsLoopMakesEveryRankTakeThreeTurnsPerGroup) {
  const Layout layout = mesh_layout("tp=2,dp=8", 16);
  const EmulationResult result = emulate(layout, EmulatedTraffic::new_group_loop, 1, 5);
  EXPECT_EQ(result.groups_emulated, 5);
  EXPECT_EQ(result.groups, 8 + 2);
  EXPECT_EQ(result.most_round_trips, 1 + 3 * 5);  // connecting, then add, count, wait per group
}

TEST(StoreTrafficEmulation, AStoreThatAJobUsedIsRefusedByName) {
  const StoreServerProcess server;
  EmulationOptions options;
  options.port = server.port();
  const Layout layout = mesh_layout("tp=2,dp=2", 4);
  (void)emulate_store_traffic(layout, options);
  try {
    (void)emulate_store_traffic(layout, options);
    FAIL() << "a used store was taken";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("needs a store no job used"), std::string::npos) << error.what();
  }
}

TEST(StoreTrafficEmulation, RanksPerClientOutsideTheWorldAndAStoreNotThereAreErrors) {
  const Layout layout = mesh_layout("tp=2,dp=2", 4);
  EmulationOptions options;
  options.ranks_per_client = 5;
  EXPECT_THROW((void)emulate_store_traffic(layout, options), ConfigError);
  options.ranks_per_client = 0;
  EXPECT_THROW((void)emulate_store_traffic(layout, options), ConfigError);
  options.ranks_per_client = 1;
  options.host = "localhost";  // an address is needed, not a name
  EXPECT_THROW((void)emulate_store_traffic(layout, options), ConfigError);
  options.host = "127.0.0.1";
  {
    const StoreServerProcess gone;
    options.port = gone.port();
  }
  EXPECT_THROW((void)emulate_store_traffic(layout, options), BackendError);
}

}  // namespace
}  // namespace pgroups
