// The placement search: for each level boundary, the ways to fill one unit with shares of
// the mesh's dimensions, each costed in closed form; then the cheapest chain of nested
// shares across the levels.

#include "pgroups/layout/placement.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <set>

#include "lowering.hpp"
#include "pgroups/common/error.hpp"

namespace pgroups {
namespace {

using Shares = std::vector<std::int64_t>;  // per mesh dimension

// What the cost needs of a kind: its dimensions, groups and whether it is Megatron's partial
// embd (the first and last member of each pp group) or pos_embd (the first).
struct KindInfo {
  std::string name;
  DimMask varying = 0;
  std::int64_t group_size = 1;
  std::int64_t groups = 0;
  bool partial = false;
  double traffic = 0;
};

struct Problem {
  std::vector<std::int64_t> sizes;      // mesh dimension sizes, fastest first
  std::vector<std::int64_t> boundaries;  // GPUs in one unit of each level, the node first
  std::vector<double> costs;             // per level
  std::vector<KindInfo> kinds;
};

// Units of level `level` one group of `kind` spans when `within` of each dimension lies inside
// one unit: the product of the shares outside it.
std::int64_t units_spanned(const Problem& p, const KindInfo& kind, const Shares& within) {
  std::int64_t units = 1;
  for (std::size_t d = 0; d < p.sizes.size(); ++d) {
    if ((kind.varying >> d & 1U) != 0) units *= p.sizes[d] / within[d];
  }
  if (kind.partial) return units > 1 && kind.group_size == 2 ? 2 : 1;
  return units;
}

double level_cost(const Problem& p, std::size_t level, const Shares& within) {
  double total = 0;
  for (const KindInfo& kind : p.kinds) {
    const std::int64_t units = units_spanned(p, kind, within);
    total += kind.traffic * static_cast<double>(kind.groups) * p.costs[level] * static_cast<double>(units - 1);
  }
  return total;
}

PlacementCost costed(const Problem& p, std::vector<Shares> within) {
  PlacementCost out;
  for (const KindInfo& kind : p.kinds) {
    KindCost entry{kind.name, kind.group_size, kind.groups, kind.traffic, {}, {}, 0};
    for (std::size_t level = 0; level < within.size(); ++level) {
      const std::int64_t units = units_spanned(p, kind, within[level]);
      entry.units.push_back(units);
      entry.crossing.push_back(units > 1 ? kind.groups : 0);
      entry.cost += kind.traffic * static_cast<double>(kind.groups) * p.costs[level] * static_cast<double>(units - 1);
    }
    out.cost += entry.cost;
    out.kinds.push_back(std::move(entry));
  }
  out.within = std::move(within);
  return out;
}

// The prime factors of n with their exponents, by trial division up to 2^20; a remainder
// above that is kept as one factor (it may be composite: the family then keeps it whole).
std::vector<std::pair<std::int64_t, int>> factors_of(std::int64_t n) {
  std::vector<std::pair<std::int64_t, int>> out;
  for (std::int64_t f = 2; f <= (std::int64_t{1} << 20) && f * f <= n; ++f) {
    if (n % f != 0) continue;
    int e = 0;
    while (n % f == 0) {
      n /= f;
      ++e;
    }
    out.emplace_back(f, e);
  }
  if (n > 1) out.emplace_back(n, 1);
  return out;
}

int exponent_in(std::int64_t n, std::int64_t f) {
  int e = 0;
  while (n % f == 0) {
    n /= f;
    ++e;
  }
  return e;
}

// Every way to give each dimension a share of one unit of `boundary` GPUs (a divisor of its
// size, the shares' product the unit), at most `budget` of them; the `keep` cheapest by this
// level's cost are returned.
struct Candidate {
  double cost;
  Shares shares;
  bool operator<(const Candidate& other) const { return cost < other.cost; }
};

std::vector<Candidate> unit_fillings(const Problem& p, std::size_t level, std::int64_t& steps) {
  const std::size_t n = p.sizes.size();
  const auto primes = factors_of(p.boundaries[level]);
  std::vector<std::vector<int>> caps(primes.size(), std::vector<int>(n, 0));
  for (std::size_t i = 0; i < primes.size(); ++i) {
    int total = 0;
    for (std::size_t d = 0; d < n; ++d) total += caps[i][d] = exponent_in(p.sizes[d], primes[i].first);
    if (total < primes[i].second) return {};
  }
  std::priority_queue<Candidate> kept;  // the worst kept on top
  constexpr std::int64_t kBudget = 2'000'000;
  std::int64_t local = 0;
  Shares shares(n, 1);
  // Depth-first over (prime, dimension): how many of the prime's factors this dimension takes.
  const auto walk = [&](auto&& self, std::size_t prime, std::size_t dim, int left) -> void {
    if (local >= kBudget) return;
    if (prime == primes.size()) {
      ++local;
      const double cost = level_cost(p, level, shares);
      if (kept.size() < kPlacementCandidatesPerLevel) {
        kept.push({cost, shares});
      } else if (cost < kept.top().cost) {
        kept.pop();
        kept.push({cost, shares});
      }
      return;
    }
    if (dim == n) {
      if (left == 0) self(self, prime + 1, 0, prime + 1 < primes.size() ? primes[prime + 1].second : 0);
      return;
    }
    const std::int64_t f = primes[prime].first;
    const std::int64_t saved = shares[dim];
    for (int take = 0; take <= std::min(left, caps[prime][dim]); ++take) {
      self(self, prime, dim + 1, left - take);
      shares[dim] *= f;
    }
    shares[dim] = saved;
  };
  walk(walk, 0, 0, primes.empty() ? 0 : primes.front().second);
  steps += local;
  std::vector<Candidate> out;
  while (!kept.empty()) {
    out.push_back(kept.top());
    kept.pop();
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// The shares of the plain mesh order at each boundary, when each boundary falls on a
// dimension's divisor; nothing when one cuts a dimension unevenly.
std::optional<std::vector<Shares>> identity_shares(const Problem& p) {
  std::vector<Shares> out;
  for (const std::int64_t boundary : p.boundaries) {
    Shares shares(p.sizes.size(), 1);
    std::int64_t rest = boundary;
    for (std::size_t d = 0; d < p.sizes.size() && rest > 1; ++d) {
      if (rest % p.sizes[d] == 0) {
        shares[d] = p.sizes[d];
        rest /= p.sizes[d];
      } else if (p.sizes[d] % rest == 0) {
        shares[d] = rest;
        rest = 1;
      } else {
        return std::nullopt;
      }
    }
    if (rest != 1) return std::nullopt;
    out.push_back(std::move(shares));
  }
  return out;
}

bool nests(const Shares& inner, const Shares& outer) {
  for (std::size_t d = 0; d < inner.size(); ++d) {
    if (outer[d] % inner[d] != 0) return false;
  }
  return true;
}

Problem problem_of(const Layout& layout, const Cluster& cluster) {
  if (!layout.is_mesh()) {
    throw ConfigError(
        "pgroups place needs a named mesh (--mesh, --order or a [mesh] table): the presets' "
        "dimensions are not placed");
  }
  if (!layout.rank_map().identity()) {
    throw ConfigError(
        "pgroups place chooses the rank map: give the layout without one (no --rank-map, no "
        "parallel.rank_map)");
  }
  validate(cluster);
  const std::int64_t gpus = cluster.node_count * cluster.gpus_per_node;
  if (gpus != layout.world_size()) {
    throw ConfigError(
        fmt::format("the mesh has {} ranks, but the cluster has {} GPUs ({} nodes of {}): place puts "
                    "one rank on each GPU",
                    layout.world_size(), gpus, cluster.node_count, cluster.gpus_per_node));
  }
  Problem p;
  for (const MeshDim& dim : layout.mesh().dims()) p.sizes.push_back(dim.size);
  p.boundaries.push_back(cluster.gpus_per_node);
  p.costs.push_back(cluster.node_cost);
  for (const ClusterLevel& level : cluster.levels) {
    p.boundaries.push_back(level.nodes * cluster.gpus_per_node);
    p.costs.push_back(level.cost);
  }
  const Mesh& mesh = layout.mesh();
  for (std::size_t k = 0; k < layout.group_kinds().size(); ++k) {
    const GroupKind& kind = layout.group_kinds()[k];
    KindInfo info;
    info.name = kind.name;
    for (const std::string& dim : kind.dims) info.varying |= DimMask{1} << mesh.dim_index(dim);
    info.group_size = layout.group_size(k);
    info.groups = layout.group_count(k);
    info.partial = kind.partial;
    info.traffic = traffic_of(cluster, kind.name);
    p.kinds.push_back(std::move(info));
  }
  // Every cost the search compares is at most this bound (each group spans at most its own
  // size of units at each level), so a finite bound keeps every sum finite: infinity would
  // read as "no chain" and NaN compares false.
  double bound = 0;
  for (const KindInfo& kind : p.kinds) {
    for (const double cost : p.costs) {
      bound += kind.traffic * static_cast<double>(kind.groups) * cost * static_cast<double>(kind.group_size - 1);
    }
    if (!std::isfinite(bound)) {
      throw ConfigError(fmt::format(
          "the placement's cost overflows a double at kind '{}' (traffic {} x {} groups x level costs up to {}): "
          "scale the traffic or the level costs down (only their ratios matter)",
          kind.name, kind.traffic, kind.groups, *std::max_element(p.costs.begin(), p.costs.end())));
    }
  }
  return p;
}

std::string kind_names_of(const Layout& layout) {
  std::vector<std::string_view> names;
  for (const GroupKind& kind : layout.group_kinds()) names.emplace_back(kind.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

bool map_is_valid(const Layout& layout, std::vector<std::int64_t> map) {
  ParallelConfig config = layout.config();
  config.rank_map = std::move(map);
  try {
    (void)Layout(config);
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

}  // namespace

Cluster with_job_traffic(Cluster cluster, const Layout& layout,
                         std::span<const std::pair<std::string, double>> job_traffic) {
  // Named members, not a structured binding: clang before 16 cannot capture one in a lambda.
  for (const std::pair<std::string, double>& given : job_traffic) {
    const std::string& name = given.first;
    if (!layout.find_group_kind(name)) {
      throw ConfigError(
          fmt::format("the job's traffic names kind '{}', which the plan does not build; its kinds are {}",
                      detail::printable(name), kind_names_of(layout)));
    }
    const auto entry = std::find_if(cluster.traffic.begin(), cluster.traffic.end(),
                                    [&](const auto& named) { return named.first == name; });
    if (entry == cluster.traffic.end()) {
      cluster.traffic.push_back(given);
    } else {
      entry->second = given.second;
    }
  }
  return cluster;
}

PlacementResult place(const Layout& layout, const Cluster& cluster) {
  const Problem p = problem_of(layout, cluster);
  PlacementResult result;
  for (const auto& named : cluster.traffic) {
    if (!layout.find_group_kind(named.first)) result.unused_traffic.push_back(named.first);
  }
  result.levels.emplace_back("node");
  for (const ClusterLevel& level : cluster.levels) result.levels.push_back(level.name);
  result.level_costs = p.costs;
  const bool launch_is_topological = cluster.node_order.empty();

  // The identity: in closed form when it is one of the family and the launch order keeps
  // each unit's nodes together; otherwise by enumeration.
  const auto identity = identity_shares(p);
  if (identity && launch_is_topological) {
    result.identity = costed(p, *identity);
  } else if (layout.world_size() <= kPlacementEnumerationLimit) {
    result.identity = cost_by_enumeration(layout, cluster);
  } else {
    throw ConfigError(
        fmt::format("the plain mesh order cuts a dimension across a level unevenly (or the nodes' "
                    "launch order splits a unit), and a world of {} ranks is above the {} that are "
                    "costed group by group",
                    layout.world_size(), kPlacementEnumerationLimit));
  }

  // One layer of candidates per boundary, each with the identity's shares when it has them.
  std::vector<std::vector<Candidate>> layers;
  for (std::size_t level = 0; level < p.boundaries.size(); ++level) {
    std::vector<Candidate> layer = unit_fillings(p, level, result.steps);
    if (identity) {
      const Shares& own = (*identity)[level];
      if (std::none_of(layer.begin(), layer.end(), [&](const Candidate& c) { return c.shares == own; })) {
        layer.push_back({level_cost(p, level, own), own});
      }
    }
    layers.push_back(std::move(layer));
  }
  // The cheapest chain of nested shares: best[l][i] = cost of layer l's candidate i plus
  // the cheapest chain below it that it contains.
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(layers.size());
  std::vector<std::vector<std::size_t>> from(layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l) {
    best[l].assign(layers[l].size(), kNone);
    from[l].assign(layers[l].size(), 0);
    for (std::size_t i = 0; i < layers[l].size(); ++i) {
      if (l == 0) {
        best[l][i] = layers[l][i].cost;
        continue;
      }
      for (std::size_t j = 0; j < layers[l - 1].size(); ++j) {
        ++result.steps;
        if (best[l - 1][j] == kNone || !nests(layers[l - 1][j].shares, layers[l][i].shares)) continue;
        const double total = best[l - 1][j] + layers[l][i].cost;
        if (total < best[l][i]) {
          best[l][i] = total;
          from[l][i] = j;
        }
      }
    }
  }
  // The chains by their cost, the cheapest first; the first whose rank map passes Layout's
  // check (every chain does when the launch order is the topological one).
  std::vector<std::size_t> ends;
  if (!layers.empty()) {
    for (std::size_t i = 0; i < layers.back().size(); ++i) {
      if (best.back()[i] != kNone) ends.push_back(i);
    }
    std::sort(ends.begin(), ends.end(), [&](std::size_t a, std::size_t b) { return best.back()[a] < best.back()[b]; });
  }
  result.best = result.identity;
  result.best_is_identity = true;
  constexpr std::size_t kTries = 16;
  for (std::size_t t = 0; t < ends.size() && t < kTries; ++t) {
    const std::size_t end = ends[t];
    if (!(best.back()[end] < result.identity.cost)) break;
    std::vector<Shares> chain(layers.size());
    std::size_t i = end;
    for (std::size_t l = layers.size(); l-- > 0;) {
      chain[l] = layers[l][i].shares;
      i = from[l][i];
    }
    PlacementCost candidate = costed(p, std::move(chain));
    if (!launch_is_topological && !map_is_valid(layout, placement_rank_map(layout, cluster, candidate))) continue;
    result.best = std::move(candidate);
    result.best_is_identity = false;
    break;
  }
  return result;
}

std::vector<std::int64_t> placement_rank_map(const Layout& layout, const Cluster& cluster,
                                             const PlacementCost& placement) {
  const Mesh& mesh = layout.mesh();
  const std::int64_t world = layout.world_size();
  std::vector<std::int64_t> map(static_cast<std::size_t>(world));
  const std::size_t n = mesh.dims().size();
  const std::int64_t g = cluster.gpus_per_node;
  // Each dimension's factor in each segment (inside the node, between two boundaries, above
  // the last), low digit first.
  std::vector<Shares> bounds = placement.within;
  Shares whole(n);
  for (std::size_t d = 0; d < n; ++d) whole[d] = mesh.dims()[d].size;
  bounds.push_back(whole);
  for (std::int64_t r = 0; r < world; ++r) {
    const std::vector<std::int64_t> coords = mesh.coordinates(r);
    std::int64_t slot = r;
    if (!placement.within.empty()) {
      slot = 0;
      std::int64_t stride = 1;
      for (std::size_t s = 0; s < bounds.size(); ++s) {
        for (std::size_t d = 0; d < n; ++d) {
          const std::int64_t below = s == 0 ? 1 : bounds[s - 1][d];
          const std::int64_t factor = bounds[s][d] / below;
          if (factor == 1) continue;
          slot += (coords[d] / below % factor) * stride;
          stride *= factor;
        }
      }
      const std::int64_t node = slot / g;
      slot = (cluster.node_order.empty() ? node : cluster.node_order[static_cast<std::size_t>(node)]) * g + slot % g;
    }
    map[static_cast<std::size_t>(r)] = slot;
  }
  return map;
}

PlacementCost cost_by_enumeration(const Layout& layout, const Cluster& cluster) {
  validate(cluster);
  const std::int64_t g = cluster.gpus_per_node;
  // The topological position of each launch position's node.
  std::vector<std::int64_t> position(static_cast<std::size_t>(cluster.node_count));
  std::iota(position.begin(), position.end(), 0);
  for (std::size_t i = 0; i < cluster.node_order.size(); ++i) {
    position[static_cast<std::size_t>(cluster.node_order[i])] = static_cast<std::int64_t>(i);
  }
  std::vector<std::int64_t> unit_nodes = {1};
  std::vector<double> costs = {cluster.node_cost};
  for (const ClusterLevel& level : cluster.levels) {
    unit_nodes.push_back(level.nodes);
    costs.push_back(level.cost);
  }
  PlacementCost out;
  for (std::size_t k = 0; k < layout.group_kinds().size(); ++k) {
    const GroupKind& kind = layout.group_kinds()[k];
    KindCost entry{kind.name,
                   layout.group_size(k),
                   layout.group_count(k),
                   traffic_of(cluster, kind.name),
                   std::vector<std::int64_t>(unit_nodes.size(), 0),
                   std::vector<std::int64_t>(unit_nodes.size(), -1),
                   0};
    for (const std::vector<std::int64_t>& group : layout.groups(k)) {
      for (std::size_t l = 0; l < unit_nodes.size(); ++l) {
        std::set<std::int64_t> units;
        for (const std::int64_t rank : group)
          units.insert(position[static_cast<std::size_t>(rank / g)] / unit_nodes[l]);
        const auto spanned = static_cast<std::int64_t>(units.size());
        if (spanned > 1) ++entry.crossing[l];
        entry.units[l] = entry.units[l] == -1 || entry.units[l] == spanned ? spanned : 0;
        entry.cost += entry.traffic * costs[l] * static_cast<double>(spanned - 1);
      }
    }
    for (std::int64_t& units : entry.units) units = std::max<std::int64_t>(units, 0);
    out.cost += entry.cost;
    out.kinds.push_back(std::move(entry));
  }
  return out;
}

std::string placement_text(const Layout& layout, const Cluster& cluster, const PlacementCost& placement) {
  if (placement.within.empty()) return "the plain mesh order";
  const Mesh& mesh = layout.mesh();
  const std::size_t n = mesh.dims().size();
  std::vector<std::string> names = {"node"};
  for (const ClusterLevel& level : cluster.levels) names.push_back(level.name);
  names.emplace_back("rest");
  std::vector<Shares> bounds = placement.within;
  Shares whole(n);
  for (std::size_t d = 0; d < n; ++d) whole[d] = mesh.dims()[d].size;
  bounds.push_back(whole);
  std::vector<std::string> parts;
  for (std::size_t s = 0; s < bounds.size(); ++s) {
    std::vector<std::string> factors;
    for (std::size_t d = 0; d < n; ++d) {
      const std::int64_t below = s == 0 ? 1 : bounds[s - 1][d];
      const std::int64_t factor = bounds[s][d] / below;
      if (factor > 1) factors.push_back(fmt::format("{} {}", mesh.dims()[d].name, factor));
    }
    if (!factors.empty()) parts.push_back(fmt::format("{}: {}", names[s], fmt::join(factors, " x ")));
  }
  return parts.empty() ? std::string("one rank") : fmt::format("{}", fmt::join(parts, " | "));
}

}  // namespace pgroups
