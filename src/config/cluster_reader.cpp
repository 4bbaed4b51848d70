// The cluster readers: the [cluster] table of the three config formats and Slurm's
// topology.conf, both ending in the same check of units (cluster_units below).

#include "pgroups/config/cluster_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

#include "../common/did_you_mean.hpp"
#include "format_readers.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/layout/error.hpp"
#include "value_tree.hpp"

namespace pgroups {
namespace {

using detail::ConfigEntry;
using detail::ConfigValue;
using detail::SourcePosition;
using detail::ValueKind;

constexpr std::size_t kMaxHosts = std::size_t{1} << 20;

// A level whose units are given as host names: the [cluster] table's host lists, or the
// switches and blocks of a topology.conf.
struct UnitLevel {
  std::string name;
  double cost = 1;
  std::vector<std::vector<std::string>> units;
  std::vector<std::string> unit_names;  // for messages: "unit 2", "switch s1"
  std::string where;                    // "file:line: levels[0]" for messages
};

// Units must hold the same number of the job's nodes and nest; the nodes' topological
// order then keeps each unit together, units numbered by their first node in launch order.
void apply_unit_levels(Cluster& cluster, const std::vector<UnitLevel>& levels, bool skip_foreign_hosts) {
  std::map<std::string, std::int64_t, std::less<>> position;
  for (std::size_t i = 0; i < cluster.hosts.size(); ++i)
    position.emplace(cluster.hosts[i], static_cast<std::int64_t>(i));
  const auto n = static_cast<std::size_t>(cluster.node_count);
  std::vector<std::vector<std::int64_t>> unit_of;  // per level, per launch position
  for (const UnitLevel& level : levels) {
    std::vector<std::int64_t> units(n, -1);
    std::vector<std::int64_t> sizes;
    std::vector<std::size_t> named;  // the level's unit index behind each kept unit
    for (std::size_t u = 0; u < level.units.size(); ++u) {
      std::int64_t held = 0;
      for (const std::string& host : level.units[u]) {
        const auto at = position.find(host);
        if (at == position.end()) {
          if (skip_foreign_hosts) continue;
          throw ParseError(fmt::format("{}: {} holds host {}, which is not one of the cluster's nodes", level.where,
                                       level.unit_names[u], quoted_excerpt(host)));
        }
        auto& unit = units[static_cast<std::size_t>(at->second)];
        if (unit >= 0) {
          throw ParseError(fmt::format("{}: host {} is in two units of level {} ({} and {})", level.where,
                                       quoted_excerpt(host), level.name,
                                       level.unit_names[named[static_cast<std::size_t>(unit)]], level.unit_names[u]));
        }
        unit = static_cast<std::int64_t>(sizes.size());
        ++held;
      }
      if (held > 0) {
        sizes.push_back(held);
        named.push_back(u);
      }
    }
    for (std::size_t p = 0; p < n; ++p) {
      if (units[p] < 0) {
        throw ParseError(fmt::format("{}: host {} is in no unit of level {}", level.where,
                                     quoted_excerpt(cluster.hosts[p]), level.name));
      }
    }
    for (std::size_t u = 1; u < sizes.size(); ++u) {
      if (sizes[u] != sizes[0]) {
        throw ParseError(fmt::format(
            "{}: the units of level {} hold different numbers of the job's nodes ({} holds {}, "
            "{} holds {}): place needs units of one size",
            level.where, level.name, level.unit_names[named[0]], sizes[0], level.unit_names[named[u]], sizes[u]));
      }
    }
    // Renumbered by first appearance in launch order.
    std::vector<std::int64_t> renumber(sizes.size(), -1);
    std::int64_t next = 0;
    for (std::size_t p = 0; p < n; ++p) {
      auto& r = renumber[static_cast<std::size_t>(units[p])];
      if (r < 0) r = next++;
      units[p] = r;
    }
    if (!unit_of.empty()) {
      std::map<std::int64_t, std::int64_t> outer_of;
      for (std::size_t p = 0; p < n; ++p) {
        const auto [at, added] = outer_of.emplace(unit_of.back()[p], units[p]);
        if (!added && at->second != units[p]) {
          throw ParseError(
              fmt::format("{}: host {} and the other hosts of its unit of the level below lie in different "
                          "units of level {}: each unit must lie inside one unit of the level above",
                          level.where, quoted_excerpt(cluster.hosts[p]), level.name));
        }
      }
    }
    cluster.levels.push_back({level.name, sizes.empty() ? 1 : sizes[0], level.cost});
    unit_of.push_back(std::move(units));
  }
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    for (std::size_t l = unit_of.size(); l-- > 0;) {
      const auto ua = unit_of[l][static_cast<std::size_t>(a)];
      const auto ub = unit_of[l][static_cast<std::size_t>(b)];
      if (ua != ub) return ua < ub;
    }
    return false;
  });
  bool identity = true;
  for (std::size_t i = 0; i < n; ++i) identity = identity && order[i] == static_cast<std::int64_t>(i);
  cluster.node_order = identity ? std::vector<std::int64_t>{} : std::move(order);
}

std::string kind_name(const ConfigValue& value) {
  switch (value.kind) {
    case ValueKind::null: return "null";
    case ValueKind::boolean: return "a boolean";
    case ValueKind::integer:
    case ValueKind::big_integer:
      return fmt::format(
          "integer {}",
          printable_excerpt(value.kind == ValueKind::integer ? std::to_string(value.integer) : value.text, 40));
    case ValueKind::floating: return fmt::format("float {}", printable_excerpt(value.text, 40));
    case ValueKind::string: return fmt::format("string {}", quoted_excerpt(value.text, '"'));
    case ValueKind::array: return "an array";
    case ValueKind::table: return "a table";
    case ValueKind::date_time: return "a date-time";
  }
  return "a value";
}

class ClusterReader {
 public:
  explicit ClusterReader(std::string_view source) : source_(source) {}

  Cluster read(const ConfigValue& root) const {
    const ConfigEntry* entry = root.kind == ValueKind::table ? root.find(detail::kClusterKey) : nullptr;
    if (entry == nullptr) {
      throw ParseError(
          fmt::format("{}: no cluster table: a cluster file holds cluster = {{gpus_per_node, nodes, "
                      "levels, ...}} (docs/using/placement.md)",
                      source_));
    }
    const ConfigValue& table = entry->value;
    if (table.kind != ValueKind::table)
      fail(table.position, fmt::format("cluster must be a table, found {}", kind_name(table)));
    Cluster cluster;
    const ConfigValue* gpus = nullptr;
    const ConfigValue* nodes = nullptr;
    const ConfigValue* levels = nullptr;
    for (const ConfigEntry& e : table.entries) {
      if (e.key == "gpus_per_node") {
        gpus = &e.value;
      } else if (e.key == "nodes") {
        nodes = &e.value;
      } else if (e.key == "node_cost") {
        cluster.node_cost = number(e.value, "cluster.node_cost");
      } else if (e.key == "levels") {
        levels = &e.value;
      } else if (e.key == "traffic") {
        read_traffic(e.value, cluster);
      } else {
        constexpr std::array<std::string_view, 5> kKeys = {"gpus_per_node", "nodes", "node_cost", "levels", "traffic"};
        fail(e.key_position, fmt::format("unknown key {} in cluster; the keys are {}{}", quoted_excerpt(e.key),
                                         fmt::join(kKeys, ", "), detail::did_you_mean(e.key, kKeys)));
      }
    }
    if (gpus == nullptr) fail(table.position, "cluster has no gpus_per_node: give the GPUs (ranks) of one node");
    cluster.gpus_per_node = integer(*gpus, "cluster.gpus_per_node");
    if (cluster.gpus_per_node < 1) {
      fail(gpus->position,
           fmt::format("cluster.gpus_per_node {} is invalid: it must be a positive integer", cluster.gpus_per_node));
    }
    if (nodes == nullptr) fail(table.position, "cluster has no nodes: give a count or the host names in launch order");
    if (nodes->kind == ValueKind::array) {
      cluster.hosts = strings(*nodes, "cluster.nodes");
      std::set<std::string_view> seen;
      for (std::size_t i = 0; i < cluster.hosts.size(); ++i) {
        if (!seen.insert(cluster.hosts[i]).second) {
          fail(nodes->entries[i].value.position,
               fmt::format("cluster.nodes[{}]: host {} is given twice", i, quoted_excerpt(cluster.hosts[i])));
        }
      }
      cluster.node_count = static_cast<std::int64_t>(cluster.hosts.size());
      if (cluster.node_count == 0) fail(nodes->position, "cluster.nodes is empty: give at least one host");
    } else {
      cluster.node_count = integer(*nodes, "cluster.nodes", "an integer or an array of host names");
      if (cluster.node_count < 1) {
        fail(nodes->position,
             fmt::format("cluster.nodes {} is invalid: it must be a positive integer", cluster.node_count));
      }
    }
    if (levels != nullptr) read_levels(*levels, cluster);
    try {
      validate(cluster);
    } catch (const ConfigError& error) {
      throw ConfigError(fmt::format("{}: {}", source_, error.what()));
    }
    return cluster;
  }

 private:
  void read_levels(const ConfigValue& value, Cluster& cluster) const {
    if (value.kind != ValueKind::array) {
      fail(value.position, fmt::format("cluster.levels must be an array of tables, found {}", kind_name(value)));
    }
    std::vector<UnitLevel> unit_levels;
    for (std::size_t i = 0; i < value.entries.size(); ++i) {
      const ConfigValue& level = value.entries[i].value;
      const std::string path = fmt::format("cluster.levels[{}]", i);
      if (level.kind != ValueKind::table) {
        fail(level.position, fmt::format("{} must be a table {{name, nodes, cost}}, found {}", path, kind_name(level)));
      }
      ClusterLevel out;
      const ConfigValue* nodes = nullptr;
      bool named = false;
      for (const ConfigEntry& e : level.entries) {
        if (e.key == "name") {
          if (e.value.kind != ValueKind::string)
            fail(e.value.position, fmt::format("{}.name must be a string, found {}", path, kind_name(e.value)));
          if (e.value.text.empty() || e.value.text == "node" || e.value.text == "rest") {
            fail(e.value.position, fmt::format("{}.name {} is invalid: a level needs a name of its own (node and rest "
                                               "are taken)",
                                               path, quoted_excerpt(e.value.text, '"')));
          }
          out.name = e.value.text;
          named = true;
        } else if (e.key == "nodes") {
          nodes = &e.value;
        } else if (e.key == "cost") {
          out.cost = number(e.value, path + ".cost");
        } else {
          constexpr std::array<std::string_view, 3> kKeys = {"name", "nodes", "cost"};
          fail(e.key_position, fmt::format("unknown key {} in {}; the keys are name, nodes, cost{}",
                                           quoted_excerpt(e.key), path, detail::did_you_mean(e.key, kKeys)));
        }
      }
      if (!named) fail(level.position, fmt::format("{} has no name", path));
      if (nodes == nullptr)
        fail(level.position, fmt::format("{} ({}) has no nodes: give the nodes of one unit, or the "
                                         "hosts of each unit",
                                         path, out.name));
      if (nodes->kind == ValueKind::array) {
        if (cluster.hosts.empty()) {
          fail(nodes->position, fmt::format("{}.nodes lists hosts, but cluster.nodes is a count: give the host names "
                                            "there too",
                                            path));
        }
        UnitLevel unit_level{out.name, out.cost, {}, {}, detail::located(source_, nodes->position, path + ".nodes")};
        for (std::size_t u = 0; u < nodes->entries.size(); ++u) {
          unit_level.units.push_back(strings(nodes->entries[u].value, fmt::format("{}.nodes[{}]", path, u)));
          unit_level.unit_names.push_back(fmt::format("unit {}", u));
        }
        unit_levels.push_back(std::move(unit_level));
      } else {
        if (!unit_levels.empty()) {
          fail(nodes->position, fmt::format("{}.nodes is a count, but a level below lists hosts: give every level "
                                            "the same way",
                                            path));
        }
        out.nodes = integer(*nodes, path + ".nodes", "an integer or an array of host lists");
        cluster.levels.push_back(std::move(out));
      }
    }
    if (!unit_levels.empty()) {
      if (!cluster.levels.empty()) {
        fail(value.position, "cluster.levels mixes counts and host lists: give every level the same way");
      }
      apply_unit_levels(cluster, unit_levels, false);
    }
  }

  void read_traffic(const ConfigValue& value, Cluster& cluster) const {
    if (value.kind != ValueKind::table) {
      fail(value.position,
           fmt::format("cluster.traffic must be a table of kind = relative bytes, found {}", kind_name(value)));
    }
    for (const ConfigEntry& e : value.entries) {
      cluster.traffic.emplace_back(e.key,
                                   number(e.value, fmt::format("cluster.traffic.{}", printable_excerpt(e.key, 40))));
    }
  }

  std::vector<std::string> strings(const ConfigValue& value, std::string_view path) const {
    if (value.kind != ValueKind::array)
      fail(value.position, fmt::format("{} must be an array of host names, found {}", path, kind_name(value)));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value.entries.size(); ++i) {
      const ConfigValue& host = value.entries[i].value;
      if (host.kind != ValueKind::string || host.text.empty()) {
        fail(host.position, fmt::format("{}[{}] must be a host name, found {}", path, i, kind_name(host)));
      }
      out.push_back(host.text);
    }
    return out;
  }

  std::int64_t integer(const ConfigValue& value, std::string_view path,
                       std::string_view expected = "an integer") const {
    if (value.kind == ValueKind::integer) return value.integer;
    if (value.kind == ValueKind::big_integer)
      fail(value.position,
           fmt::format("{} {} does not fit in a 64-bit integer", path, printable_excerpt(value.text, 40)));
    fail(value.position, fmt::format("{} must be {}, found {}", path, expected, kind_name(value)));
  }

  double number(const ConfigValue& value, std::string_view path) const {
    double result = 0;
    if (value.kind == ValueKind::integer) {
      result = static_cast<double>(value.integer);
    } else if (value.kind == ValueKind::floating) {
      errno = 0;
      char* end = nullptr;
      result = std::strtod(value.text.c_str(), &end);
      if (end == value.text.c_str())
        fail(value.position, fmt::format("{} {} is not a number", path, printable_excerpt(value.text, 40)));
    } else {
      fail(value.position, fmt::format("{} must be a number, found {}", path, kind_name(value)));
    }
    if (!std::isfinite(result) || result < 0) {
      fail(value.position,
           fmt::format("{} {} is invalid: it must be a finite number >= 0", path,
                       printable_excerpt(value.text.empty() ? std::to_string(value.integer) : value.text, 40)));
    }
    return result;
  }

  [[noreturn]] void fail(SourcePosition position, std::string_view message) const {
    detail::throw_parse_error(source_, position, message);
  }

  std::string_view source_;
};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Cluster parse_cluster(std::string_view text, ConfigFormat format, std::string_view source) {
  ConfigValue root;
  switch (format) {
    case ConfigFormat::toml: root = detail::read_toml_tree(text, source); break;
    case ConfigFormat::json: root = detail::read_json_tree(text, source); break;
    case ConfigFormat::python: root = detail::read_python_tree(text, source); break;
  }
  return ClusterReader(source).read(root);
}

Cluster read_cluster_file(const std::filesystem::path& path) {
  std::string source;
  const ConfigValue root = detail::read_tree_file(path, source);
  return ClusterReader(source).read(root);
}

std::vector<std::string> expand_host_list(std::string_view text) {
  const auto bad = [&](std::string_view rule) {
    throw ConfigError(fmt::format("host list {}: {}", quoted_excerpt(text, '\'', 80), rule));
  };
  std::vector<std::string> out;
  std::size_t start = 0;
  int depth = 0;
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '[') {
      if (++depth > 1) bad("brackets nest");
    } else if (i < text.size() && text[i] == ']') {
      if (--depth < 0) bad("a ']' closes no '['");
    } else if (i == text.size() || (text[i] == ',' && depth == 0)) {
      if (depth != 0) bad("a '[' is never closed");
      const std::string_view name = text.substr(start, i - start);
      if (name.empty()) bad("a name is empty (two commas, or one at an end)");
      names.push_back(name);
      start = i + 1;
    }
  }
  for (const std::string_view name : names) {
    std::vector<std::string> expanded = {""};
    std::size_t i = 0;
    while (i < name.size()) {
      const std::size_t open = name.find('[', i);
      const std::string_view literal =
          name.substr(i, open == std::string_view::npos ? std::string_view::npos : open - i);
      for (std::string& e : expanded) e += literal;
      if (open == std::string_view::npos) break;
      const std::size_t close = name.find(']', open);
      const std::string_view inside = name.substr(open + 1, close - open - 1);
      if (inside.empty()) bad("a bracket is empty");
      std::vector<std::string> choices;
      std::size_t part_start = 0;
      for (std::size_t j = 0; j <= inside.size(); ++j) {
        if (j < inside.size() && inside[j] != ',') continue;
        const std::string_view part = inside.substr(part_start, j - part_start);
        part_start = j + 1;
        const std::size_t dash = part.find('-');
        const std::string_view first = part.substr(0, dash);
        const std::string_view last = dash == std::string_view::npos ? first : part.substr(dash + 1);
        const auto digits = [](std::string_view s) {
          return !s.empty() && s.size() <= 18 &&
                 std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
        };
        if (!digits(first) || !digits(last)) {
          bad(fmt::format("{} is not a number or a range of numbers (a-b)", quoted_excerpt(part)));
        }
        const std::int64_t a = std::stoll(std::string(first));
        const std::int64_t b = std::stoll(std::string(last));
        if (b < a) bad(fmt::format("range {} ends below its start", quoted_excerpt(part)));
        if (b - a >= static_cast<std::int64_t>(kMaxHosts)) bad(fmt::format("more than {} names", kMaxHosts));
        for (std::int64_t v = a; v <= b; ++v) {
          std::string number = std::to_string(v);
          if (number.size() < first.size()) number.insert(0, first.size() - number.size(), '0');
          choices.push_back(std::move(number));
        }
      }
      std::vector<std::string> next;
      if (expanded.size() * choices.size() > kMaxHosts) bad(fmt::format("more than {} names", kMaxHosts));
      for (const std::string& e : expanded) {
        for (const std::string& c : choices) next.push_back(e + c);
      }
      expanded = std::move(next);
      i = close + 1;
    }
    for (std::string& e : expanded) out.push_back(std::move(e));
    if (out.size() > kMaxHosts) bad(fmt::format("more than {} names", kMaxHosts));
  }
  return out;
}

std::vector<std::pair<std::string, double>> parse_traffic(std::string_view text) {
  std::vector<std::pair<std::string, double>> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view entry = text.substr(start, comma - start);
    start = comma + 1;
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      throw ConfigError(fmt::format("traffic entry {} must be KIND=BYTES (e.g. tp=8,dp=1)", quoted_excerpt(entry)));
    }
    const std::string name(entry.substr(0, eq));
    const std::string value(entry.substr(eq + 1));
    char* end = nullptr;
    const double bytes = value.empty() ? -1 : std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(bytes) || bytes < 0) {
      throw ConfigError(fmt::format("traffic of {} is {}: it must be a finite number >= 0 (relative bytes)",
                                    quoted_excerpt(name), quoted_excerpt(value)));
    }
    for (const auto& [known, unused] : out) {
      (void)unused;
      if (known == name) throw ConfigError(fmt::format("traffic of {} is given twice", quoted_excerpt(name)));
    }
    out.emplace_back(name, bytes);
    if (comma == text.size()) break;
  }
  return out;
}

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
