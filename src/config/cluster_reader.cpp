// The [cluster] table of the three config formats, ending in the check of units that
// Slurm's topology.conf shares (cluster_units.hpp), and the host-list and traffic syntax.

#include "pgroups/config/cluster_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

#include "cluster_units.hpp"
#include "format_readers.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "table_reader.hpp"
#include "value_tree.hpp"

namespace pgroups {
namespace {

using detail::apply_unit_levels;
using detail::ConfigEntry;
using detail::ConfigValue;
using detail::SourcePosition;
using detail::UnitLevel;
using detail::ValueKind;

constexpr std::size_t kMaxHosts = std::size_t{1} << 20;

class ClusterReader : public detail::TableReader {
 public:
  using TableReader::TableReader;

  Cluster read(const ConfigValue& root) const {
    const ConfigEntry* entry = root.kind == ValueKind::table ? root.find(detail::kClusterKey) : nullptr;
    if (entry == nullptr) {
      throw ParseError(
          fmt::format("{}: no cluster table: a cluster file holds cluster = {{gpus_per_node, nodes, "
                      "levels, ...}} (docs/using/placement.md)",
                      source_));
    }
    const ConfigValue& table = entry->value;
    if (table.kind != ValueKind::table) wrong_type(table, "cluster", words_.a_table);
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
        cluster.node_cost = non_negative_number(e.value, "cluster.node_cost");
      } else if (e.key == "levels") {
        levels = &e.value;
      } else if (e.key == "traffic") {
        read_traffic(e.value, cluster);
      } else {
        constexpr std::array<std::string_view, 5> kKeys = {"gpus_per_node", "nodes", "node_cost", "levels", "traffic"};
        unknown_key(e, "cluster", kKeys);
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
      cluster.node_count =
          integer(*nodes, "cluster.nodes", fmt::format("an integer or {} of host names", words_.an_array));
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
      wrong_type(value, "cluster.levels", fmt::format("{} of {}s", words_.an_array, words_.table));
    }
    std::vector<UnitLevel> unit_levels;
    for (std::size_t i = 0; i < value.entries.size(); ++i) {
      const ConfigValue& level = value.entries[i].value;
      const std::string path = fmt::format("cluster.levels[{}]", i);
      if (level.kind != ValueKind::table) {
        wrong_type(level, path, fmt::format("{} {{name, nodes, cost}}", words_.a_table));
      }
      ClusterLevel out;
      const ConfigValue* nodes = nullptr;
      bool named = false;
      for (const ConfigEntry& e : level.entries) {
        if (e.key == "name") {
          if (e.value.kind != ValueKind::string) wrong_type(e.value, path + ".name", "a string");
          if (e.value.text.empty() || e.value.text == "node" || e.value.text == "rest") {
            fail(e.value.position, fmt::format("{}.name {} is invalid: a level needs a name of its own (node and rest "
                                               "are taken)",
                                               path, quoted_excerpt(e.value.text, words_.quote)));
          }
          out.name = e.value.text;
          named = true;
        } else if (e.key == "nodes") {
          nodes = &e.value;
        } else if (e.key == "cost") {
          out.cost = non_negative_number(e.value, path + ".cost");
        } else {
          constexpr std::array<std::string_view, 3> kKeys = {"name", "nodes", "cost"};
          unknown_key(e, path, kKeys);
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
        out.nodes = integer(*nodes, path + ".nodes", fmt::format("an integer or {} of host lists", words_.an_array));
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
      wrong_type(value, "cluster.traffic", fmt::format("{} of kind = relative bytes", words_.a_table));
    }
    for (const ConfigEntry& e : value.entries) {
      cluster.traffic.emplace_back(
          e.key, non_negative_number(e.value, fmt::format("cluster.traffic.{}", printable_excerpt(e.key, 40))));
    }
  }

  std::vector<std::string> strings(const ConfigValue& value, std::string_view path) const {
    if (value.kind != ValueKind::array) wrong_type(value, path, fmt::format("{} of host names", words_.an_array));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value.entries.size(); ++i) {
      const ConfigValue& host = value.entries[i].value;
      if (host.kind != ValueKind::string || host.text.empty()) {
        wrong_type(host, fmt::format("{}[{}]", path, i), "a host name");
      }
      out.push_back(host.text);
    }
    return out;
  }
};

}  // namespace

Cluster parse_cluster(std::string_view text, ConfigFormat format, std::string_view source) {
  ConfigValue root;
  switch (format) {
    case ConfigFormat::toml: root = detail::read_toml_tree(text, source); break;
    case ConfigFormat::json: root = detail::read_json_tree(text, source); break;
    case ConfigFormat::python: root = detail::read_python_tree(text, source); break;
  }
  return ClusterReader(format, source).read(root);
}

Cluster read_cluster_file(const std::filesystem::path& path) {
  std::string source;
  const ConfigValue root = detail::read_tree_file(path, source);
  // read_tree_file has refused a path of no known format.
  return ClusterReader(config_format_from_path(path).value_or(ConfigFormat::toml), source).read(root);
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

}  // namespace pgroups
