// Slurm's topology.conf (the tree plugin's SwitchName= lines, the block plugin's BlockName=
// lines) read into a cluster for the job's hosts, through the units check the [cluster]
// table shares (cluster_units.hpp).

#include "pgroups/config/slurm_topology.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "cluster_units.hpp"
#include "format_readers.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/config/cluster_reader.hpp"
#include "pgroups/layout/error.hpp"

namespace pgroups {
namespace {

using detail::UnitLevel;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Cluster parse_slurm_topology(std::string_view text, std::string_view source, const std::vector<std::string>& hosts,
                             std::int64_t gpus_per_node,
                             const std::vector<std::pair<std::string, double>>& level_costs) {
  struct Switch {
    std::string name;
    std::size_t line = 0;
    std::vector<std::string> nodes;
    std::vector<std::string> children;
    std::size_t children_line = 0;
    int level = 0;
  };
  std::vector<Switch> switches;
  std::vector<Switch> blocks;
  std::map<std::string, std::size_t, std::less<>> index;
  const auto fail = [&](std::size_t line, std::string_view message) -> void {
    throw ParseError(fmt::format("{}:{}: {}", source, line, message));
  };
  std::size_t line_number = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::pair<std::string, std::string>> fields;
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
    if (fields.empty()) continue;
    const std::string& head = fields.front().first;
    if (head == "blocksizes") continue;
    if (head != "switchname" && head != "blockname") {
      fail(line_number, fmt::format("unknown line {}=: the tree plugin's lines start with SwitchName=, the block "
                                    "plugin's with BlockName= (or BlockSizes=)",
                                    quoted_excerpt(head)));
    }
    const bool is_block = head == "blockname";
    Switch entry{fields.front().second, line_number, {}, {}, 0, 0};
    if (entry.name.empty()) fail(line_number, fmt::format("{}= is empty", is_block ? "BlockName" : "SwitchName"));
    for (std::size_t f = 1; f < fields.size(); ++f) {
      const auto& [key, value] = fields[f];
      if (key == "nodes") {
        try {
          entry.nodes = expand_host_list(value);
        } catch (const ConfigError& error) {
          fail(line_number, fmt::format("Nodes=: {}", error.what()));
        }
      } else if (key == "switches" && !is_block) {
        try {
          entry.children = expand_host_list(value);
        } catch (const ConfigError& error) {
          fail(line_number, fmt::format("Switches=: {}", error.what()));
        }
        entry.children_line = line_number;
      } else if (key == "linkspeed") {
      } else {
        fail(line_number, fmt::format("unknown field {}= in a {} line; the fields are {}", quoted_excerpt(key),
                                      is_block ? "BlockName" : "SwitchName",
                                      is_block ? "BlockName, Nodes" : "SwitchName, Switches, Nodes, LinkSpeed"));
      }
    }
    if (is_block) {
      if (!switches.empty())
        fail(line_number, "BlockName= after SwitchName=: a topology.conf is one plugin's, tree or block");
      if (entry.nodes.empty()) fail(line_number, fmt::format("block {} has no Nodes=", quoted_excerpt(entry.name)));
      for (const Switch& other : blocks) {
        if (other.name == entry.name)
          fail(line_number,
               fmt::format("block {} is defined twice (first at line {})", quoted_excerpt(entry.name), other.line));
      }
      blocks.push_back(std::move(entry));
    } else {
      if (!blocks.empty())
        fail(line_number, "SwitchName= after BlockName=: a topology.conf is one plugin's, tree or block");
      if (entry.nodes.empty() == entry.children.empty()) {
        fail(line_number, fmt::format("switch {} must have either Nodes= (a leaf switch) or Switches= (a parent)",
                                      quoted_excerpt(entry.name)));
      }
      const auto [at, added] = index.emplace(entry.name, switches.size());
      if (!added)
        fail(line_number, fmt::format("switch {} is defined twice (first at line {})", quoted_excerpt(entry.name),
                                      switches[at->second].line));
      switches.push_back(std::move(entry));
    }
  }
  if (switches.empty() && blocks.empty()) {
    throw ParseError(fmt::format("{}: no SwitchName= or BlockName= line: nothing describes the cluster", source));
  }
  if (hosts.empty()) throw ConfigError("the job's node list is empty: give --nodelist or set SLURM_JOB_NODELIST");
  Cluster cluster;
  cluster.gpus_per_node = gpus_per_node;
  cluster.hosts = hosts;
  cluster.node_count = static_cast<std::int64_t>(hosts.size());
  {
    std::set<std::string_view> seen;
    for (const std::string& host : hosts) {
      if (!seen.insert(host).second)
        throw ConfigError(fmt::format("the node list holds host {} twice", quoted_excerpt(host)));
    }
  }
  const auto cost_of = [&](const std::string& name, double fallback) {
    for (const auto& [level, cost] : level_costs) {
      if (level == name) return cost;
    }
    return fallback;
  };
  cluster.node_cost = cost_of("node", 1);
  std::vector<UnitLevel> levels;
  if (!blocks.empty()) {
    UnitLevel level{"block", cost_of("block", 2), {}, {}, fmt::format("{}: level block", source)};
    for (const Switch& block : blocks) {
      level.units.push_back(block.nodes);
      level.unit_names.push_back(fmt::format("block {} (line {})", block.name, block.line));
    }
    levels.push_back(std::move(level));
  } else {
    // Levels from the leaves up, each switch one above its highest child; a cycle never ends.
    // The walks below count each switch's nodes once only in a tree: a switch with two
    // parents would count its nodes twice, and a chain of diamonds would take exponential
    // time, so each switch may be named by one parent.
    std::map<std::string, const Switch*, std::less<>> parent_of;
    for (const Switch& s : switches) {
      for (const std::string& child : s.children) {
        if (!index.count(child)) {
          fail(s.children_line,
               fmt::format("Switches= names switch {}, which no SwitchName= line defines", quoted_excerpt(child)));
        }
        const auto [entry, first] = parent_of.try_emplace(child, &s);
        if (!first) {
          fail(s.children_line,
               fmt::format("switch {} is named by Switches= of both {} (line {}) and {}: a switch tree gives each "
                           "switch one parent",
                           quoted_excerpt(child), quoted_excerpt(entry->second->name), entry->second->children_line,
                           quoted_excerpt(s.name)));
        }
      }
    }
    const auto level_of = [&](auto&& self, std::size_t i, std::size_t depth) -> int {
      Switch& s = switches[i];
      if (s.level > 0) return s.level;
      if (depth > switches.size())
        fail(s.line, fmt::format("switch {} is its own ancestor: the switches form a cycle", quoted_excerpt(s.name)));
      int level = 1;
      for (const std::string& child : s.children) level = std::max(level, 1 + self(self, index.at(child), depth + 1));
      s.level = level;
      return level;
    };
    int top = 0;
    for (std::size_t i = 0; i < switches.size(); ++i) top = std::max(top, level_of(level_of, i, 0));
    const auto nodes_under = [&](auto&& self, const Switch& s, std::vector<std::string>& out,
                                 std::size_t depth) -> void {
      if (depth > switches.size()) return;
      out.insert(out.end(), s.nodes.begin(), s.nodes.end());
      for (const std::string& child : s.children) self(self, switches[index.at(child)], out, depth + 1);
    };
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
  }
  apply_unit_levels(cluster, levels, true);
  // A level whose one unit holds every node costs nothing and says nothing.
  while (!cluster.levels.empty() && cluster.levels.back().nodes == cluster.node_count) {
    cluster.levels.pop_back();
  }
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
