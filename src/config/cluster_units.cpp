#include "cluster_units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups::detail {

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
        // This unit's index is the next of `sizes`: a host it already holds is named twice here.
        if (unit == static_cast<std::int64_t>(sizes.size())) {
          throw ParseError(fmt::format("{}: host {} is named twice in {} of level {}", level.where,
                                       quoted_excerpt(host), level.unit_names[u], level.name));
        }
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

}  // namespace pgroups::detail
