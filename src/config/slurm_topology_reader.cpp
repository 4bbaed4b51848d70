// Slurm's topology.conf (the tree plugin's SwitchName= lines, the block plugin's BlockName=
// lines) read into a cluster for the job's hosts, through the units check the [cluster]
// table shares (cluster_units.hpp).

#include "pgroups/config/slurm_topology.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster_units.hpp"
#include "format_readers.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/config/cluster_reader.hpp"

namespace pgroups {
namespace {

using detail::UnitLevel;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One SwitchName= or BlockName= line.
struct Switch {
  std::string name;
  std::size_t line = 0;
  std::vector<std::string> nodes;
  std::vector<std::string> children;
  std::size_t children_line = 0;
  int level = 0;
};

using Fields = std::vector<std::pair<std::string, std::string>>;

// The lines of one topology.conf: one plugin's, tree (switches) or block (blocks).
class TopologyLines {
 public:
  explicit TopologyLines(std::string_view source) : source_(source) {}

  void read(std::string_view text) {
    std::size_t line_number = 0;
    std::size_t begin = 0;
    while (begin < text.size()) {
      std::size_t end = text.find('\n', begin);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(begin, end - begin);
      begin = end + 1;
      ++line_number;
      if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
      const Fields fields = fields_of(line, line_number);
      if (fields.empty() || fields.front().first == "blocksizes") continue;
      add(fields, line_number);
    }
    if (switches.empty() && blocks.empty()) {
      throw ParseError(fmt::format("{}: no SwitchName= or BlockName= line: nothing describes the cluster", source_));
    }
  }

  [[noreturn]] void fail(std::size_t line, std::string_view message) const {
    throw ParseError(fmt::format("{}:{}: {}", source_, line, message));
  }

  std::vector<Switch> switches;
  std::vector<Switch> blocks;
  std::map<std::string, std::size_t, std::less<>> index;  // switch name -> switches[i]

 private:
  Fields fields_of(std::string_view line, std::size_t line_number) const {
    Fields fields;
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (i >= line.size()) break;
      std::size_t j = i;
      while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
      const std::string_view token = line.substr(i, j - i);
      i = j;
      const std::size_t eq = token.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        fail(line_number,
             fmt::format("{} is not a field: topology.conf lines are Key=Value fields", quoted_excerpt(token)));
      }
      fields.emplace_back(lower(token.substr(0, eq)), std::string(token.substr(eq + 1)));
    }
    return fields;
  }

  std::vector<std::string> hosts(std::string_view value, std::string_view key, std::size_t line_number) const {
    try {
      return expand_host_list(value);
    } catch (const ConfigError& error) {
      fail(line_number, fmt::format("{}=: {}", key, error.what()));
    }
  }

  void add(const Fields& fields, std::size_t line_number) {
    const std::string& head = fields.front().first;
    if (head != "switchname" && head != "blockname") {
      fail(line_number, fmt::format("unknown line {}=: the tree plugin's lines start with SwitchName=, the block "
                                    "plugin's with BlockName= (or BlockSizes=)",
                                    quoted_excerpt(head)));
    }
    const bool is_block = head == "blockname";
    Switch entry{fields.front().second, line_number, {}, {}, 0, 0};
    if (entry.name.empty()) fail(line_number, fmt::format("{}= is empty", is_block ? "BlockName" : "SwitchName"));
    for (std::size_t f = 1; f < fields.size(); ++f) {
      const std::string& key = fields[f].first;
      const std::string& value = fields[f].second;
      if (key == "nodes") {
        entry.nodes = hosts(value, "Nodes", line_number);
      } else if (key == "switches" && !is_block) {
        entry.children = hosts(value, "Switches", line_number);
        entry.children_line = line_number;
      } else if (key != "linkspeed") {
        fail(line_number, fmt::format("unknown field {}= in a {} line; the fields are {}", quoted_excerpt(key),
                                      is_block ? "BlockName" : "SwitchName",
                                      is_block ? "BlockName, Nodes" : "SwitchName, Switches, Nodes, LinkSpeed"));
      }
    }
    if (is_block) {
      add_block(std::move(entry));
    } else {
      add_switch(std::move(entry));
    }
  }

  void add_block(Switch entry) {
    if (!switches.empty())
      fail(entry.line, "BlockName= after SwitchName=: a topology.conf is one plugin's, tree or block");
    if (entry.nodes.empty()) fail(entry.line, fmt::format("block {} has no Nodes=", quoted_excerpt(entry.name)));
    for (const Switch& other : blocks) {
      if (other.name == entry.name)
        fail(entry.line,
             fmt::format("block {} is defined twice (first at line {})", quoted_excerpt(entry.name), other.line));
    }
    blocks.push_back(std::move(entry));
  }

  void add_switch(Switch entry) {
    if (!blocks.empty())
      fail(entry.line, "SwitchName= after BlockName=: a topology.conf is one plugin's, tree or block");
    if (entry.nodes.empty() == entry.children.empty()) {
      fail(entry.line, fmt::format("switch {} must have either Nodes= (a leaf switch) or Switches= (a parent)",
                                   quoted_excerpt(entry.name)));
    }
    const auto [at, added] = index.emplace(entry.name, switches.size());
    if (!added)
      fail(entry.line, fmt::format("switch {} is defined twice (first at line {})", quoted_excerpt(entry.name),
                                   switches[at->second].line));
    switches.push_back(std::move(entry));
  }

  std::string_view source_;
};

using CostOf = std::function<double(const std::string& name, double fallback)>;

// The block plugin's one level.
std::vector<UnitLevel> block_levels(const TopologyLines& lines, std::string_view source, const CostOf& cost_of) {
  UnitLevel level{"block", cost_of("block", 2), {}, {}, fmt::format("{}: level block", source)};
  for (const Switch& block : lines.blocks) {
    level.units.push_back(block.nodes);
    level.unit_names.push_back(fmt::format("block {} (line {})", block.name, block.line));
  }
  return {std::move(level)};
}

// The tree plugin's levels from the leaves up, each switch one above its highest child; a
// cycle never ends. The walks below count each switch's nodes once only in a tree: a
// switch with two parents would count its nodes twice, and a chain of diamonds would take
// exponential time, so each switch may be named by one parent.
std::vector<UnitLevel> switch_levels(TopologyLines& lines, std::string_view source, const CostOf& cost_of) {
  std::vector<Switch>& switches = lines.switches;
  std::map<std::string, const Switch*, std::less<>> parent_of;
  for (const Switch& s : switches) {
    for (const std::string& child : s.children) {
      if (!lines.index.count(child)) {
        lines.fail(s.children_line,
                   fmt::format("Switches= names switch {}, which no SwitchName= line defines", quoted_excerpt(child)));
      }
      const auto [entry, first] = parent_of.try_emplace(child, &s);
      if (!first) {
        lines.fail(s.children_line,
                   fmt::format("switch {} is named by Switches= of both {} (line {}) and {}: a switch tree gives "
                               "each switch one parent",
                               quoted_excerpt(child), quoted_excerpt(entry->second->name), entry->second->children_line,
                               quoted_excerpt(s.name)));
      }
    }
  }
  const auto level_of = [&](auto&& self, std::size_t i, std::size_t depth) -> int {
    Switch& s = switches[i];
    if (s.level > 0) return s.level;
    if (depth > switches.size())
      lines.fail(s.line,
                 fmt::format("switch {} is its own ancestor: the switches form a cycle", quoted_excerpt(s.name)));
    int level = 1;
    for (const std::string& child : s.children) {
      level = std::max(level, 1 + self(self, lines.index.at(child), depth + 1));
    }
    s.level = level;
    return level;
  };
  int top = 0;
  for (std::size_t i = 0; i < switches.size(); ++i) top = std::max(top, level_of(level_of, i, 0));
  const auto nodes_under = [&](auto&& self, const Switch& s, std::vector<std::string>& out, std::size_t depth) -> void {
    if (depth > switches.size()) return;
    out.insert(out.end(), s.nodes.begin(), s.nodes.end());
    for (const std::string& child : s.children) self(self, switches[lines.index.at(child)], out, depth + 1);
  };
  std::vector<UnitLevel> levels;
  for (int l = 1; l <= top; ++l) {
    const std::string name = fmt::format("switch{}", l);
    UnitLevel level{name, cost_of(name, std::ldexp(1.0, l)), {}, {}, fmt::format("{}: level {}", source, name)};
    for (const Switch& s : switches) {
      if (s.level != l) continue;
      std::vector<std::string> under;
      nodes_under(nodes_under, s, under, 0);
      level.units.push_back(std::move(under));
      level.unit_names.push_back(fmt::format("switch {} (line {})", s.name, s.line));
    }
    levels.push_back(std::move(level));
  }
  return levels;
}

// Every name of --level-costs must be a level the file has.
void check_level_costs(const std::vector<std::pair<std::string, double>>& level_costs,
                       const std::vector<UnitLevel>& levels, std::string_view source) {
  for (const auto& entry : level_costs) {
    const std::string& name = entry.first;
    const bool known =
        name == "node" || std::any_of(levels.begin(), levels.end(), [&](const UnitLevel& l) { return l.name == name; });
    if (!known) {
      std::vector<std::string> names = {"node"};
      for (const UnitLevel& l : levels) names.push_back(l.name);
      throw ConfigError(fmt::format("--level-costs names level {}, which {} does not have; its levels are {}",
                                    quoted_excerpt(name), source, fmt::join(names, ", ")));
    }
  }
}

}  // namespace

Cluster parse_slurm_topology(std::string_view text, std::string_view source, const std::vector<std::string>& hosts,
                             std::int64_t gpus_per_node,
                             const std::vector<std::pair<std::string, double>>& level_costs) {
  TopologyLines lines(source);
  lines.read(text);
  if (hosts.empty()) throw ConfigError("the job's node list is empty: give --nodelist or set SLURM_JOB_NODELIST");
  Cluster cluster;
  cluster.gpus_per_node = gpus_per_node;
  cluster.hosts = hosts;
  cluster.node_count = static_cast<std::int64_t>(hosts.size());
  std::set<std::string_view> seen;
  for (const std::string& host : hosts) {
    if (!seen.insert(host).second)
      throw ConfigError(fmt::format("the node list holds host {} twice", quoted_excerpt(host)));
  }
  const CostOf cost_of = [&level_costs](const std::string& name, double fallback) {
    for (const auto& [level, cost] : level_costs) {
      if (level == name) return cost;
    }
    return fallback;
  };
  cluster.node_cost = cost_of("node", 1);
  const std::vector<UnitLevel> levels =
      lines.blocks.empty() ? switch_levels(lines, source, cost_of) : block_levels(lines, source, cost_of);
  apply_unit_levels(cluster, levels, true);
  // A level whose one unit holds every node costs nothing and says nothing.
  while (!cluster.levels.empty() && cluster.levels.back().nodes == cluster.node_count) {
    cluster.levels.pop_back();
  }
  check_level_costs(level_costs, levels, source);
  try {
    validate(cluster);
  } catch (const ConfigError& error) {
    throw ConfigError(fmt::format("{}: {}", source, error.what()));
  }
  return cluster;
}

Cluster read_slurm_topology(const std::filesystem::path& path, const std::vector<std::string>& hosts,
                            std::int64_t gpus_per_node,
                            const std::vector<std::pair<std::string, double>>& level_costs) {
  const std::string text = detail::read_whole_file(path);
  return parse_slurm_topology(text, printable_excerpt(path.string(), 400), hosts, gpus_per_node, level_costs);
}

}  // namespace pgroups
