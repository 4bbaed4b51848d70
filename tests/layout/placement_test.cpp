// The placement search against an exhaustive search of its family on small clusters, its
// closed-form cost against counting every group, and its bounded work at 10^5 GPUs and at
// a world of 2^62 ranks.

#include "pgroups/layout/placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups {
namespace {

ParallelConfig mesh_config(std::vector<MeshDim> dims, std::vector<std::string> groups = {},
                           std::vector<std::int64_t> map = {}) {
  ParallelConfig config;
  config.mesh = MeshConfig{std::move(dims), std::move(groups)};
  config.rank_map = std::move(map);
  return config;
}

Cluster cluster_of(std::int64_t gpus, std::int64_t nodes, std::vector<ClusterLevel> levels,
                   std::vector<std::pair<std::string, double>> traffic = {}) {
  Cluster c;
  c.gpus_per_node = gpus;
  c.node_count = nodes;
  c.levels = std::move(levels);
  c.traffic = std::move(traffic);
  return c;
}

double enumerated_cost(const ParallelConfig& config, const Cluster& cluster, std::vector<std::int64_t> map) {
  ParallelConfig mapped = config;
  mapped.rank_map = std::move(map);
  return cost_by_enumeration(Layout(mapped), cluster).cost;
}

// Every ordering of every dimension's prime factors (each dimension's factors low digit
// first): the family written out by hand, one rank map each, each costed group by group.
double exhaustive_optimum(const ParallelConfig& config, const Cluster& cluster, std::int64_t* orders) {
  const Mesh mesh(config.mesh->dims);
  std::vector<std::pair<std::size_t, std::int64_t>> tokens;  // (dimension, prime factor)
  for (std::size_t d = 0; d < mesh.dims().size(); ++d) {
    std::int64_t size = mesh.dims()[d].size;
    for (std::int64_t f = 2; f <= size; ++f) {
      while (size % f == 0) {
        tokens.emplace_back(d, f);
        size /= f;
      }
    }
  }
  std::sort(tokens.begin(), tokens.end());
  double best = std::numeric_limits<double>::infinity();
  do {
    ++*orders;
    std::vector<std::int64_t> map(static_cast<std::size_t>(mesh.size()));
    for (std::int64_t r = 0; r < mesh.size(); ++r) {
      const auto coords = mesh.coordinates(r);
      std::vector<std::int64_t> below(mesh.dims().size(), 1);
      std::int64_t slot = 0;
      std::int64_t stride = 1;
      for (const auto& [d, f] : tokens) {
        slot += coords[d] / below[d] % f * stride;
        below[d] *= f;
        stride *= f;
      }
      map[static_cast<std::size_t>(r)] = slot;
    }
    best = std::min(best, enumerated_cost(config, cluster, std::move(map)));
  } while (std::next_permutation(tokens.begin(), tokens.end()));
  return best;
}

struct SmallCase {
  const char* name;
  ParallelConfig config;
  Cluster cluster;
};

class PlacementExhaustive : public ::testing::TestWithParam<SmallCase> {};

TEST_P(PlacementExhaustive, FindsTheOptimumOfTheFamilyAndItsCostIsTheGroupsCost) {
  const SmallCase& c = GetParam();
  const Layout layout(c.config);
  const PlacementResult result = place(layout, c.cluster);
  std::int64_t orders = 0;
  const double optimum = exhaustive_optimum(c.config, c.cluster, &orders);
  EXPECT_GT(orders, 1);
  EXPECT_DOUBLE_EQ(result.best.cost, optimum) << placement_text(layout, c.cluster, result.best);
  EXPECT_LE(result.best.cost, result.identity.cost);
  // The closed form is what counting every group of the proposed map gives, and so is the
  // identity's.
  const std::vector<std::int64_t> map = placement_rank_map(layout, c.cluster, result.best);
  EXPECT_DOUBLE_EQ(enumerated_cost(c.config, c.cluster, map), result.best.cost);
  const PlacementCost counted = cost_by_enumeration(layout, c.cluster);
  EXPECT_DOUBLE_EQ(counted.cost, result.identity.cost);
  for (std::size_t k = 0; k < counted.kinds.size(); ++k) {
    EXPECT_EQ(counted.kinds[k].crossing, result.identity.kinds[k].crossing) << counted.kinds[k].name;
  }
  // The map passes Layout's checks (a permutation keeping each one-dimension kind's order).
  EXPECT_NO_THROW((void)Layout(mesh_config(c.config.mesh->dims, c.config.mesh->groups, map)));
}

INSTANTIATE_TEST_SUITE_P(
    SmallClusters, PlacementExhaustive,
    ::testing::Values(
        SmallCase{"tp4_cp2_dp2_pp2_on_8x4_in_switches_of_2", mesh_config({{"tp", 4}, {"cp", 2}, {"dp", 2}, {"pp", 2}}),
                  cluster_of(4, 8, {{"switch", 2, 4}})},
        SmallCase{"dp_first_order_on_two_levels", mesh_config({{"dp", 4}, {"tp", 2}, {"pp", 2}}),
                  cluster_of(2, 8, {{"a", 2, 3}, {"b", 4, 10}})},
        SmallCase{"heavy_dp_traffic", mesh_config({{"tp", 2}, {"dp", 4}, {"pp", 2}}, {"tp", "dp", "pp", "tp-dp"}),
                  cluster_of(4, 4, {{"rack", 2, 5}}, {{"dp", 100}})},
        SmallCase{"embd_and_pipeline", mesh_config({{"tp", 2}, {"pp", 4}, {"dp", 2}}, {"tp", "pp", "dp", "embd"}),
                  cluster_of(2, 8, {{"nvl", 4, 6}})}),
    [](const ::testing::TestParamInfo<SmallCase>& info) { return std::string(info.param.name); });

TEST(Placement, KeepsTensorGroupsInsideTheNodeWhereTheMeshOrderSpreadsThem) {
  // dp fastest puts tp's ranks 4 apart, on two nodes of 4 GPUs; placed, tp sits in a node.
  const Layout layout(mesh_config({{"dp", 2}, {"tp", 4}}));
  const PlacementResult result = place(layout, cluster_of(4, 2, {}));
  EXPECT_EQ(result.identity.kinds[1].crossing[0], 2);
  EXPECT_EQ(result.best.kinds[1].crossing[0], 0);
  EXPECT_EQ(placement_rank_map(layout, cluster_of(4, 2, {}), result.best),
            (std::vector<std::int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(placement_text(layout, cluster_of(4, 2, {}), result.best), "node: tp 4 | rest: dp 2");
}

TEST(Placement, NeverWorseThanAnIdentityOutsideTheFamily) {
  // tp = 3 on nodes of 4: the mesh order cuts tp unevenly, outside the closed form; the
  // family's only filling of a node (dp in the node) costs more, so the identity stays.
  const Layout layout(mesh_config({{"tp", 3}, {"dp", 4}}));
  const PlacementResult result = place(layout, cluster_of(4, 3, {}));
  EXPECT_TRUE(result.identity.within.empty());
  EXPECT_DOUBLE_EQ(result.identity.cost, 16 * 2 + 2 * 6);
  EXPECT_TRUE(result.best_is_identity);
  EXPECT_DOUBLE_EQ(result.best.cost, result.identity.cost);
}

TEST(Placement, AnswersAtOnceAtAHundredThousandGpus) {
  // 1389 NVL72 domains of 18 nodes of 4 GPUs: 100,008 GPUs.
  const Layout layout(mesh_config({{"tp", 4}, {"cp", 2}, {"dp", 4167}, {"pp", 3}}));
  const Cluster cluster = cluster_of(4, 18 * 1389, {{"nvl72", 18, 8}});
  const auto start = std::chrono::steady_clock::now();
  const PlacementResult result = place(layout, cluster);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_LT(result.steps, 10'000'000);
  EXPECT_LE(result.best.cost, result.identity.cost);
  EXPECT_EQ(result.best.kinds[0].crossing[0], 0);  // tp stays in the node
}

TEST(Placement, AnswersAtOnceAtTheBoundOf2To62Ranks) {
  const Layout layout(mesh_config({{"tp", 8}, {"cp", 2}, {"ep", 2}, {"dp", std::int64_t{1} << 53}, {"pp", 16}}));
  const Cluster cluster = cluster_of(8, std::int64_t{1} << 59, {{"leaf", 32, 4}, {"spine", std::int64_t{1} << 20, 16}});
  const auto start = std::chrono::steady_clock::now();
  const PlacementResult result = place(layout, cluster);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_LT(result.steps, 10'000'000);
  EXPECT_GT(result.steps, 0);
  EXPECT_LE(result.best.cost, result.identity.cost);
  EXPECT_FALSE(placement_text(layout, cluster, result.best).empty());
}

TEST(Placement, RefusesAWorldThatIsNotTheClustersGpus) {
  const Layout layout(mesh_config({{"tp", 2}, {"dp", 2}}));
  try {
    (void)place(layout, cluster_of(4, 2, {}));
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(),
                 "the mesh has 4 ranks, but the cluster has 8 GPUs (2 nodes of 4): place puts one rank "
                 "on each GPU");
  }
}

TEST(Placement, ClusterTrafficForAKindThePlanDoesNotBuildIsReportedNotRefused) {
  const Layout layout(mesh_config({{"tp", 2}, {"dp", 2}}));
  const PlacementResult result = place(layout, cluster_of(2, 2, {}, {{"ep", 3}, {"tp", 5}, {"pp", 1}}));
  EXPECT_EQ(result.unused_traffic, (std::vector<std::string>{"ep", "pp"}));
  EXPECT_DOUBLE_EQ(result.best.kinds[0].traffic, 5.0);
}

TEST(Placement, ACostThatWouldOverflowIsRefusedBeforeTheSearch) {
  const Layout layout(mesh_config({{"tp", 2}, {"dp", 2}}));
  Cluster cluster = cluster_of(2, 2, {}, {{"tp", 1e300}});
  cluster.node_cost = 1e300;
  try {
    (void)place(layout, cluster);
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("the placement's cost overflows a double at kind 'tp'"), std::string::npos)
        << error.what();
  }
}

TEST(Placement, JobTrafficOverridesTheClustersAndMustNameAKindOfThePlan) {
  const Layout layout(mesh_config({{"tp", 2}, {"dp", 2}}));
  const std::vector<std::pair<std::string, double>> job = {{"tp", 7}, {"dp", 3}};
  const Cluster merged = with_job_traffic(cluster_of(2, 2, {}, {{"tp", 5}, {"pp", 1}}), layout, job);
  EXPECT_EQ(merged.traffic, (std::vector<std::pair<std::string, double>>{{"tp", 7}, {"pp", 1}, {"dp", 3}}));
  const std::vector<std::pair<std::string, double>> stray = {{"ep", 3}};
  try {
    (void)with_job_traffic(cluster_of(2, 2, {}), layout, stray);
    FAIL();
  } catch (const ConfigError& error) {
    EXPECT_STREQ(error.what(),
                 "the job's traffic names kind 'ep', which the plan does not build; its kinds are tp, dp");
  }
}

TEST(Placement, ALaunchOrderThatSplitsUnitsIsComposedIntoTheMap) {
  // Hosts launched a, b, c, d; switches hold {a, c} and {b, d}: topological order a c b d.
  const Layout layout(mesh_config({{"tp", 2}, {"dp", 4}}, {"tp", "dp"}));
  Cluster cluster = cluster_of(2, 4, {{"switch", 2, 10}});
  cluster.node_order = {0, 2, 1, 3};
  const PlacementResult result = place(layout, cluster);
  EXPECT_LE(result.best.cost, result.identity.cost);
  const auto map = placement_rank_map(layout, cluster, result.best);
  EXPECT_DOUBLE_EQ(enumerated_cost(layout.config(), cluster, map), result.best.cost);
}

TEST(ClusterCheck, NamesTheFieldOfEachBadValue) {
  const auto message = [](const Cluster& c) {
    try {
      validate(c);
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(cluster_of(0, 2, {})), "cluster gpus_per_node 0 is invalid: it must be a positive integer");
  EXPECT_EQ(message(cluster_of(4, 0, {})),
            "cluster nodes 0 is invalid: it must be a positive number of nodes (or host names)");
  EXPECT_EQ(message(cluster_of(4, 6, {{"switch", 4, 1}})),
            "cluster levels[0] (switch) nodes 4 does not divide the cluster's 6 nodes: every unit must be full");
  EXPECT_EQ(message(cluster_of(4, 12, {{"a", 2, 1}, {"b", 3, 1}})),
            "cluster levels[1] (b) nodes 3 is invalid: a unit must hold a positive multiple of the 2 nodes of the "
            "level below, so that each unit lies inside one unit above");
  EXPECT_EQ(message(cluster_of(4, 4, {{"a", 2, -1}})),
            "cluster levels[0] (a) cost -1 is invalid: a cost per byte must be a finite number >= 0");
  EXPECT_EQ(message(cluster_of(4, 4, {{"a", 2, 1}, {"a", 4, 1}})),
            "cluster levels[1] name 'a' is used twice (node is the node's own level)");
  EXPECT_EQ(message(cluster_of(4, 4, {}, {{"tp", -2}})),
            "traffic of 'tp' is -2: relative bytes must be a finite number >= 0");
}

TEST(ClusterTraffic, DefaultsPutTensorFirstAndEmbeddingLast) {
  EXPECT_GT(default_traffic("tp"), default_traffic("cp"));
  EXPECT_GT(default_traffic("cp"), default_traffic("ep"));
  EXPECT_GT(default_traffic("ep"), default_traffic("dp"));
  EXPECT_GT(default_traffic("dp"), default_traffic("pp"));
  EXPECT_GT(default_traffic("pp"), default_traffic("embd"));
  EXPECT_EQ(default_traffic("tp-dp"), default_traffic("dp"));
}

}  // namespace
}  // namespace pgroups
