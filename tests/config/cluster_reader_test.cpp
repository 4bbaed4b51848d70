// The cluster readers: the [cluster] table in the three formats, rank maps in config files
// and rank map files, Slurm's host lists and topology.conf; each bad field a clear error
// naming the source, the line and the field.

#include "pgroups/config/cluster_reader.hpp"

#include <gtest/gtest.h>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_merge.hpp"
#include "pgroups/config/rank_map_file.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using test::message_of;

std::string cluster_error(std::string_view text, ConfigFormat format = ConfigFormat::toml) {
  return message_of<Error>([&] { (void)parse_cluster(text, format, "c.toml"); });
}

TEST(ClusterTable, ReadsTheSameClusterFromEveryFormat) {
  const Cluster toml = parse_cluster(R"([cluster]
gpus_per_node = 4
nodes = 36
node_cost = 1
levels = [{name = "nvl72", nodes = 18, cost = 8.5}]
traffic = {tp = 16, dp = 2}
)",
                                     ConfigFormat::toml);
  const Cluster json = parse_cluster(
      R"({"cluster": {"gpus_per_node": 4, "nodes": 36, "node_cost": 1, "levels": [{"name": "nvl72", "nodes": 18, "cost": 8.5}], "traffic": {"tp": 16, "dp": 2}}})",
      ConfigFormat::json);
  const Cluster python = parse_cluster(
      "cluster = dict(gpus_per_node=4, nodes=36, node_cost=1, levels=[dict(name='nvl72', nodes=18, cost=8.5)], "
      "traffic=dict(tp=16, dp=2))\n",
      ConfigFormat::python);
  EXPECT_EQ(toml, json);
  EXPECT_EQ(toml, python);
  EXPECT_EQ(toml.levels.size(), 1U);
  EXPECT_EQ(toml.levels[0].nodes, 18);
  EXPECT_DOUBLE_EQ(toml.levels[0].cost, 8.5);
  EXPECT_EQ(toml.traffic.size(), 2U);
}

TEST(ClusterTable, SharesAFileWithTheParallelSettings) {
  const std::string text = "[parallel]\nworld_size = 8\n[cluster]\ngpus_per_node = 4\nnodes = 2\n";
  EXPECT_EQ(parse_config(text, ConfigFormat::toml).world_size, 8);
  EXPECT_EQ(parse_cluster(text, ConfigFormat::toml).node_count, 2);
}

TEST(ClusterTable, HostListsGiveUnitsAndTheirTopologicalOrder) {
  const Cluster c = parse_cluster(R"([cluster]
gpus_per_node = 2
nodes = ["a", "b", "c", "d"]
levels = [{name = "switch", nodes = [["a", "c"], ["b", "d"]], cost = 4}]
)",
                                  ConfigFormat::toml);
  EXPECT_EQ(c.levels[0].nodes, 2);
  EXPECT_EQ(c.node_order, (std::vector<std::int64_t>{0, 2, 1, 3}));
}

TEST(ClusterTable, EachBadFieldNamesTheLineAndTheField) {
  EXPECT_EQ(cluster_error("[parallel]\nworld_size = 8\n"),
            "c.toml: no cluster table: a cluster file holds cluster = {gpus_per_node, nodes, levels, ...} "
            "(docs/using/placement.md)");
  EXPECT_EQ(cluster_error("[cluster]\nnodes = 2\n"),
            "c.toml:1:1: cluster has no gpus_per_node: give the GPUs (ranks) of one node");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\n"),
            "c.toml:1:1: cluster has no nodes: give a count or the host names in launch order");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = \"4\"\nnodes = 2\n"),
            "c.toml:2:17: cluster.gpus_per_node must be an integer, found string \"4\"");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 0\nnodes = 2\n"),
            "c.toml:2:17: cluster.gpus_per_node 0 is invalid: it must be a positive integer");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = -1\n"),
            "c.toml:3:9: cluster.nodes -1 is invalid: it must be a positive integer");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = [\"a\", \"a\"]\n"),
            "c.toml:3:15: cluster.nodes[1]: host 'a' is given twice");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nnode_cost = \"x\"\n"),
            "c.toml:4:13: cluster.node_cost must be a number, found string \"x\"");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nnode_cost = -1.5\n"),
            "c.toml:4:13: cluster.node_cost -1.5 is invalid: it must be a finite number >= 0");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nlevel = []\n"),
            "c.toml:4:1: unknown key 'level' in cluster; the keys are gpus_per_node, nodes, node_cost, levels, "
            "traffic (did you mean levels?)");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nlevels = 3\n"),
            "c.toml:4:10: cluster.levels must be an array of tables, found integer 3");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nlevels = [{nodes = 2}]\n"),
            "c.toml:4:11: cluster.levels[0] has no name");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nlevels = [{name = \"node\", nodes = 2}]\n"),
            "c.toml:4:19: cluster.levels[0].name \"node\" is invalid: a level needs a name of its own (node and rest "
            "are taken)");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nlevels = [{name = \"s\"}]\n"),
            "c.toml:4:11: cluster.levels[0] (s) has no nodes: give the nodes of one unit, or the hosts of each unit");
  EXPECT_EQ(
      cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nlevels = [{name = \"s\", nodes = 2, costs = 1}]\n"),
      "c.toml:4:35: unknown key 'costs' in cluster.levels[0]; the keys are name, nodes, cost (did you mean cost?)");
  EXPECT_EQ(
      cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nlevels = [{name = \"s\", nodes = 2, cost = true}]\n"),
      "c.toml:4:42: cluster.levels[0].cost must be a number, found boolean true");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 4\nlevels = [{name = \"s\", nodes = 3}]\n"),
            "c.toml: cluster levels[0] (s) nodes 3 does not divide the cluster's 4 nodes: every unit must be full");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\nlevels = [{name = \"s\", nodes = [[\"a\"]]}]\n"),
            "c.toml:4:32: cluster.levels[0].nodes lists hosts, but cluster.nodes is a count: give the host names there "
            "too");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = [\"a\", \"b\"]\nlevels = [{name = \"s\", nodes = "
                          "[[\"a\"], [\"b\", \"c\"]]}]\n"),
            "c.toml:4:32: cluster.levels[0].nodes: unit 1 holds host 'c', which is not one of the cluster's nodes");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = [\"a\", \"b\", \"c\"]\nlevels = [{name = \"s\", nodes "
                          "= [[\"a\"], [\"b\", \"c\"]]}]\n"),
            "c.toml:4:32: cluster.levels[0].nodes: the units of level s hold different numbers of the job's nodes "
            "(unit 0 holds 1, unit 1 holds 2): place needs units of one size");
  EXPECT_EQ(cluster_error(
                "[cluster]\ngpus_per_node = 4\nnodes = [\"a\", \"b\"]\nlevels = [{name = \"s\", nodes = [[\"a\"]]}]\n"),
            "c.toml:4:32: cluster.levels[0].nodes: host 'b' is in no unit of level s");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = [\"a\", \"b\"]\nlevels = [{name = \"s\", nodes = "
                          "[[\"a\", \"b\"], [\"b\"]]}]\n"),
            "c.toml:4:32: cluster.levels[0].nodes: host 'b' is in two units of level s (unit 0 and unit 1)");
  // Twice in one unit, the first or a later one (it crashed place: that unit was not counted yet).
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = [\"a\", \"b\"]\nlevels = [{name = \"s\", nodes = "
                          "[[\"a\", \"a\"], [\"b\"]]}]\n"),
            "c.toml:4:32: cluster.levels[0].nodes: host 'a' is named twice in unit 0 of level s");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = [\"a\", \"b\"]\nlevels = [{name = \"s\", nodes = "
                          "[[\"a\"], [\"b\", \"b\"]]}]\n"),
            "c.toml:4:32: cluster.levels[0].nodes: host 'b' is named twice in unit 1 of level s");
  EXPECT_EQ(cluster_error("[cluster]\ngpus_per_node = 4\nnodes = 2\ntraffic = {tp = \"a\"}\n"),
            "c.toml:4:17: cluster.traffic.tp must be a number, found string \"a\"");
  EXPECT_EQ(cluster_error(R"({"cluster": {"gpus_per_node": 4, "nodes": 2, "levels": [3]}})", ConfigFormat::json),
            "c.toml:1:57: cluster.levels[0] must be an object {name, nodes, cost}, found integer 3");
}

TEST(HostList, ExpandsSlurmRanges) {
  EXPECT_EQ(expand_host_list("gpu[01-03,07],login1"),
            (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu07", "login1"}));
  EXPECT_EQ(expand_host_list("r[1-2]n[1-2]"), (std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(message_of<ConfigError>([] { (void)expand_host_list("gpu[1-3"); }),
            "host list 'gpu[1-3': a '[' is never closed");
  EXPECT_EQ(message_of<ConfigError>([] { (void)expand_host_list("gpu[3-1]"); }),
            "host list 'gpu[3-1]': range '3-1' ends below its start");
  EXPECT_EQ(message_of<ConfigError>([] { (void)expand_host_list("gpu[a]"); }),
            "host list 'gpu[a]': 'a' is not a number or a range of numbers (a-b)");
  EXPECT_EQ(message_of<ConfigError>([] { (void)expand_host_list("a,,b"); }),
            "host list 'a,,b': a name is empty (two commas, or one at an end)");
}

TEST(Traffic, ParsesKindsAndRefusesBadEntries) {
  const auto traffic = parse_traffic("tp=8,dp=1.5");
  ASSERT_EQ(traffic.size(), 2U);
  EXPECT_EQ(traffic[1].first, "dp");
  EXPECT_DOUBLE_EQ(traffic[1].second, 1.5);
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_traffic("tp"); }),
            "traffic entry 'tp' must be KIND=BYTES (e.g. tp=8,dp=1)");
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_traffic("tp=x"); }),
            "traffic of 'tp' is 'x': it must be a finite number >= 0 (relative bytes)");
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_traffic("tp=1,tp=2"); }), "traffic of 'tp' is given twice");
}

const char* const kTree = R"(# two leaves under one spine
SwitchName=s1 Nodes=gpu[1-2]
SwitchName=s2 Nodes=gpu[3-4] LinkSpeed=100
SwitchName=top Switches=s[1-2]
)";

TEST(SlurmTopology, TreeLeavesAreSwitch1AndTheirParentsSwitch2) {
  const Cluster c = parse_slurm_topology(kTree, "topology.conf", {"gpu1", "gpu3", "gpu2", "gpu4"}, 4);
  ASSERT_EQ(c.levels.size(), 1U);  // switch2 holds every node: nothing crosses it
  EXPECT_EQ(c.levels[0].name, "switch1");
  EXPECT_EQ(c.levels[0].nodes, 2);
  EXPECT_DOUBLE_EQ(c.levels[0].cost, 2);
  EXPECT_EQ(c.node_order, (std::vector<std::int64_t>{0, 2, 1, 3}));
  const Cluster costed = parse_slurm_topology(kTree, "topology.conf", {"gpu1", "gpu2"}, 4, {{"switch1", 7}});
  EXPECT_EQ(costed.node_count, 2);
}

TEST(SlurmTopology, AHostNamedTwiceInOneSwitchIsAParseErrorNotACrash) {
  for (const char* tree : {"SwitchName=s1 Nodes=gpu1,gpu1,gpu2\nSwitchName=top Switches=s1\n",
                           "SwitchName=s1 Nodes=gpu[1-2],gpu2\nSwitchName=top Switches=s1\n"}) {
    const std::string message =
        message_of<ParseError>([tree] { (void)parse_slurm_topology(tree, "topology.conf", {"gpu1", "gpu2"}, 4); });
    EXPECT_NE(message.find("is named twice in switch s1"), std::string::npos) << message;
  }
}

TEST(SlurmTopology, BlocksAreLevelBlock) {
  const Cluster c = parse_slurm_topology("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockSizes=2,4\n",
                                         "topology.conf", {"n1", "n2", "n3", "n4"}, 4);
  ASSERT_EQ(c.levels.size(), 1U);
  EXPECT_EQ(c.levels[0].name, "block");
  EXPECT_EQ(c.levels[0].nodes, 2);
}

TEST(SlurmTopology, EachBadLineNamesTheFileTheLineAndTheField) {
  const auto error = [](std::string_view text, std::vector<std::string> hosts = {"n1", "n2"}) {
    return message_of<Error>([&] { (void)parse_slurm_topology(text, "t.conf", hosts, 4); });
  };
  EXPECT_EQ(
      error("SwitchName=s1 Nodes=n[1-2] Speed=1\n"),
      "t.conf:1: unknown field 'speed'= in a SwitchName line; the fields are SwitchName, Switches, Nodes, LinkSpeed");
  EXPECT_EQ(error("Switch=s1\n"),
            "t.conf:1: unknown line 'switch'=: the tree plugin's lines start with SwitchName=, the block plugin's with "
            "BlockName= (or BlockSizes=)");
  EXPECT_EQ(error("SwitchName=s1 Nodes=n[1-2]\nSwitchName=s1 Nodes=n3\n"),
            "t.conf:2: switch 's1' is defined twice (first at line 1)");
  EXPECT_EQ(error("SwitchName=s1 Nodes=n[1-2]\nSwitchName=top Switches=s[1-2]\n"),
            "t.conf:2: Switches= names switch 's2', which no SwitchName= line defines");
  EXPECT_EQ(error("SwitchName=s1 Nodes=n[1-2\n"), "t.conf:1: Nodes=: host list 'n[1-2': a '[' is never closed");
  EXPECT_EQ(error("SwitchName=s1\n"),
            "t.conf:1: switch 's1' must have either Nodes= (a leaf switch) or Switches= (a parent)");
  EXPECT_EQ(error("SwitchName=a Switches=b\nSwitchName=b Switches=a\n"),
            "t.conf:2: switch 'b' is its own ancestor: the switches form a cycle");
  // A switch under two parents is no tree: its nodes would count twice, and a chain of such
  // diamonds would take time exponential in its length.
  EXPECT_EQ(error("SwitchName=s1 Nodes=n[1-2]\nSwitchName=m1 Switches=s1\nSwitchName=m2 Switches=s1\n"
                  "SwitchName=top Switches=m[1-2]\n"),
            "t.conf:3: switch 's1' is named by Switches= of both 'm1' (line 2) and 'm2': a switch tree gives each "
            "switch one parent");
  EXPECT_EQ(error("BlockName=b1 Nodes=n1\nSwitchName=s Nodes=n2\n"),
            "t.conf:2: SwitchName= after BlockName=: a topology.conf is one plugin's, tree or block");
  EXPECT_EQ(error("SwitchName=s1 Nodes=n1\n"), "t.conf: level switch1: host 'n2' is in no unit of level switch1");
  EXPECT_EQ(error("SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n[2-3]\n", {"n1", "n2", "n3"}),
            "t.conf: level switch1: the units of level switch1 hold different numbers of the job's nodes (switch s1 "
            "(line 1) holds 1, switch s2 (line 2) holds 2): place needs units of one size");
  EXPECT_EQ(error("# nothing\n"), "t.conf: no SwitchName= or BlockName= line: nothing describes the cluster");
  EXPECT_EQ(error("SwitchName=s1 Nodes=n[1-2]\n", {"n1", "n1"}), "the node list holds host 'n1' twice");
}

TEST(RankMapInConfig, IsReadFromTheParallelTableOfEveryFormat) {
  EXPECT_EQ(parse_config("[parallel]\nrank_map = [1, 0]\n", ConfigFormat::toml).rank_map,
            (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(parse_config(R"({"parallel": {"rank_map": [1, 0]}})", ConfigFormat::json).rank_map,
            (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(parse_config("parallel = dict(rank_map=[1, 0])\n", ConfigFormat::python).rank_map,
            (std::vector<std::int64_t>{1, 0}));
  // More than 64 entries are kept (the other arrays of a config stop there).
  std::string big = "[parallel]\nrank_map = [";
  for (int i = 0; i < 300; ++i) big += (i ? ", " : "") + std::to_string(299 - i);
  big += "]\n";
  EXPECT_EQ(parse_config(big, ConfigFormat::toml).rank_map.size(), 300U);
  EXPECT_EQ(
      message_of<ParseError>([] { (void)parse_config("[parallel]\nrank_map = [0, \"1\"]\n", ConfigFormat::toml); }),
      "<config>:2:16: parallel.rank_map[1] must be an integer, found string \"1\"");
  EXPECT_EQ(message_of<ParseError>([] { (void)parse_config("[parallel]\nrank_map = 3\n", ConfigFormat::toml); }),
            "<config>:2:12: parallel.rank_map must be an array of integers, found integer 3");
}

// An empty map given outright is refused by every reader, never read as no map.
TEST(RankMapInConfig, AnEmptyMapIsRefusedByEveryReaderNotTakenForNone) {
  const std::string rule = " is empty: a rank map lists the launcher rank of every mesh rank";
  const auto says = [&rule](const std::string& message, const std::string& what) {
    return message.find(what + rule) != std::string::npos;
  };
  EXPECT_TRUE(
      says(message_of<ParseError>([] { (void)parse_config("[parallel]\nrank_map = []\n", ConfigFormat::toml); }),
           "<config>:2:12: parallel.rank_map"));
  EXPECT_TRUE(
      says(message_of<ParseError>([] { (void)parse_config(R"({"parallel": {"rank_map": []}})", ConfigFormat::json); }),
           "parallel.rank_map"));
  EXPECT_TRUE(
      says(message_of<ParseError>([] { (void)parse_config("parallel = dict(rank_map=[])\n", ConfigFormat::python); }),
           "parallel.rank_map"));
  EXPECT_TRUE(
      says(message_of<ParseError>([] { (void)parse_rank_map(R"({"rank_map": []})", "m.json"); }), "m.json: rank_map"));
  ConfigOverrides overrides;
  overrides.rank_map = std::vector<std::int64_t>{};
  EXPECT_TRUE(
      says(message_of<ConfigError>([&overrides] { (void)merge_config(ParallelConfig{}, overrides); }), "rank_map"));
}

TEST(RankMapFile, TakesAListOrPlacesJson) {
  EXPECT_EQ(parse_rank_map("[2, 0, 1]", "m.json"), (std::vector<std::int64_t>{2, 0, 1}));
  EXPECT_EQ(parse_rank_map(R"({"cost": 1, "rank_map": [1, 0], "levels": ["node"]})", "m.json"),
            (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(message_of<ParseError>([] { (void)parse_rank_map(R"({"cost": 1})", "m.json"); }),
            "m.json: the object has no rank_map key: a rank map file holds the list itself ([3, 0, 1, 2]) or an "
            "object with rank_map (as pgroups place --format json prints)");
  EXPECT_EQ(message_of<ParseError>([] { (void)parse_rank_map("[0, 1.5]", "m.json"); }),
            "m.json: rank_map[1] must be an integer, found float 1.5");
  EXPECT_EQ(message_of<ParseError>([] { (void)parse_rank_map("\"x\"", "m.json"); }),
            "m.json: rank_map must be an array of integers, found string \"x\": entry r is the launcher rank that runs "
            "mesh rank r");
  EXPECT_NE(message_of<ParseError>([] { (void)parse_rank_map("[0, 1", "m.json"); }).find("m.json:1:"),
            std::string::npos);
}

TEST(RankMapFile, RefusesAKeyGivenTwiceAsTheConfigurationReaderDoes) {
  EXPECT_EQ(
      message_of<ParseError>([] { (void)parse_rank_map(R"({"rank_map": [1, 0], "rank_map": [0, 1]})", "m.json"); }),
      "m.json: duplicate key 'rank_map' in the rank map file's object: each key may be given once");
  // Nested objects are not the file's keys: place's JSON holds several with the same keys.
  EXPECT_EQ(parse_rank_map(
                R"({"crossing": {"tp": {"node": 0}}, "identity_crossing": {"tp": {"node": 2}}, "rank_map": [1, 0]})",
                "m.json"),
            (std::vector<std::int64_t>{1, 0}));
  EXPECT_NE(message_of<ParseError>([] {
              (void)parse_config(R"({"parallel": {"rank_map": [1, 0], "rank_map": [0, 1]}})", ConfigFormat::json);
            }).find("duplicate key 'rank_map' in parallel"),
            std::string::npos);
}

TEST(ClusterReader, NamesTypesInTheWordsOfTheFilesFormat) {
  auto error = [](std::string_view text, ConfigFormat format, std::string_view source) {
    return test::message_of<ParseError>([&] { (void)parse_cluster(text, format, source); });
  };
  EXPECT_EQ(error("cluster = {'gpus_per_node': 4, 'nodes': 2, 'levels': {}}\n", ConfigFormat::python, "c.py"),
            "c.py:1:54: cluster.levels must be a list of dicts, found dict");
  EXPECT_EQ(error("{\"cluster\": {\"gpus_per_node\": 4, \"nodes\": null}}", ConfigFormat::json, "c.json"),
            "c.json:1:43: cluster.nodes must be an integer or an array of host names, found null");
  EXPECT_EQ(error("cluster = 3\n", ConfigFormat::python, "c.py"), "c.py:1:11: cluster must be a dict, found integer 3");
}

}  // namespace
}  // namespace pgroups
