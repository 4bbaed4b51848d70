#include "pgroups/layout/locality.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "pgroups/common/error.hpp"
#include "world_rank.hpp"

namespace pgroups {

NodeMap NodeMap::blocks(std::int64_t world_size, std::int64_t gpus_per_node) {
  if (gpus_per_node < 1) {
    throw ConfigError(fmt::format("gpus per node {} is invalid: it must be a positive integer", gpus_per_node));
  }
  if (world_size < 1) {
    throw ConfigError(fmt::format("world size {} is invalid: it must be a positive integer", world_size));
  }
  if (world_size % gpus_per_node != 0) {
    throw ConfigError(fmt::format(
        "world size {} is not divisible by gpus per node {}: nodes are consecutive blocks of {} ranks, so the world "
        "must fill whole nodes",
        world_size, gpus_per_node, gpus_per_node));
  }
  NodeMap map;
  map.world_size_ = world_size;
  map.node_count_ = world_size / gpus_per_node;
  map.gpus_per_node_ = gpus_per_node;
  return map;
}

NodeMap NodeMap::observed(const std::vector<std::int64_t>& node_of_rank) {
  if (node_of_rank.empty()) throw ConfigError("a node map needs at least one rank");
  NodeMap map;
  map.world_size_ = static_cast<std::int64_t>(node_of_rank.size());
  std::map<std::int64_t, std::int64_t> renumbered;  // id -> node number by first appearance
  std::vector<std::int64_t> filled;                 // ranks seen so far per node
  map.node_.reserve(node_of_rank.size());
  map.local_index_.reserve(node_of_rank.size());
  for (std::size_t rank = 0; rank < node_of_rank.size(); ++rank) {
    const std::int64_t id = node_of_rank[rank];
    if (id < 0) throw ConfigError(fmt::format("rank {} has node id {}: node ids must not be negative", rank, id));
    const auto [at, added] = renumbered.emplace(id, static_cast<std::int64_t>(renumbered.size()));
    if (added) filled.push_back(0);
    const std::int64_t node = at->second;
    // A node met again after another one started holds more than one range of ranks.
    if (!map.node_.empty() && node != map.node_.back() && !added) map.contiguous_ = false;
    map.node_.push_back(node);
    map.local_index_.push_back(filled[static_cast<std::size_t>(node)]++);
  }
  map.node_count_ = static_cast<std::int64_t>(renumbered.size());
  return map;
}

void NodeMap::check_rank(std::int64_t rank) const { detail::check_world_rank(rank, world_size_); }

std::int64_t NodeMap::node_of(std::int64_t rank) const {
  check_rank(rank);
  return gpus_per_node_ ? rank / *gpus_per_node_ : node_[static_cast<std::size_t>(rank)];
}

std::int64_t NodeMap::local_index(std::int64_t rank) const {
  check_rank(rank);
  return gpus_per_node_ ? rank % *gpus_per_node_ : local_index_[static_cast<std::size_t>(rank)];
}

std::vector<std::int64_t> NodeMap::ranks_per_node() const {
  if (gpus_per_node_) return std::vector<std::int64_t>(static_cast<std::size_t>(node_count_), *gpus_per_node_);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(node_count_), 0);
  for (std::int64_t node : node_) ++counts[static_cast<std::size_t>(node)];
  return counts;
}

bool is_bandwidth_hungry(std::string_view name) noexcept {
  if (name == "tensor" || name == "1d" || name == "sequence") return true;
  if (name.starts_with("2d_") || name.starts_with("2p5d_") || name.starts_with("3d_")) return true;
  // A mesh group token: dimension names joined by '-'.
  while (!name.empty()) {
    const std::size_t dash = name.find('-');
    if (name.substr(0, dash) == "tp") return true;
    if (dash == std::string_view::npos) break;
    name.remove_prefix(dash + 1);
  }
  return false;
}

std::vector<KindLocality> kind_locality(const Layout& layout, const NodeMap& nodes) {
  if (nodes.world_size() != layout.world_size()) {
    throw ConfigError(
        fmt::format("the node map covers {} ranks, but the layout has {}", nodes.world_size(), layout.world_size()));
  }
  std::vector<KindLocality> result;
  const auto kinds = layout.group_kinds();
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    KindLocality entry;
    entry.name = kinds[kind].name;
    entry.group_size = layout.group_size(kind);
    entry.bandwidth_hungry = is_bandwidth_hungry(entry.name);
    const std::int64_t count = layout.group_count(kind);
    for (std::int64_t g = 0; g < count; ++g) {
      const std::int64_t leader = layout.group_leader(kind, g);
      const std::int64_t node = nodes.node_of(leader);
      // Members ascend and, when each node is one range of ranks, the last member decides.
      bool within = true;
      const std::int64_t size =
          kinds[kind].partial ? static_cast<std::int64_t>(layout.group_of(leader, kind).size()) : entry.group_size;
      if (nodes.contiguous()) {
        within = nodes.node_of(layout.group_member(leader, kind, size - 1)) == node;
      } else {
        for (std::int64_t i = 1; i < size && within; ++i) {
          within = nodes.node_of(layout.group_member(leader, kind, i)) == node;
        }
      }
      ++(within ? entry.groups_within_node : entry.groups_across_nodes);
    }
    result.push_back(std::move(entry));
  }
  return result;
}

std::optional<KindLocality> block_locality(const Layout& layout, std::size_t kind, std::int64_t gpus_per_node,
                                           std::int64_t* steps) {
  const GroupKind& group_kind = layout.group_kinds()[kind];
  const std::int64_t size = layout.group_size(kind);
  const std::int64_t w = layout.world_size();
  const std::int64_t g = gpus_per_node;
  if (steps != nullptr) ++*steps;
  if (g < 1 || w % g != 0 || !layout.rank_map().identity()) return std::nullopt;
  // The precondition of the closed form: the groups are the consecutive blocks [kS,
  // (k+1)S). A kind is the set of ranks varying some mesh dimensions, so its groups are
  // translates of the first one; when the first is [0, S) they all are blocks. A partial
  // kind (embd) is no such set, and is never judged here.
  if (group_kind.partial || layout.group_member(0, kind, size - 1) != size - 1) return std::nullopt;
  KindLocality entry;
  entry.name = group_kind.name;
  entry.group_size = size;
  entry.bandwidth_hungry = is_bandwidth_hungry(entry.name);
  // Block k starts at kS and stays on its node iff kS mod G <= G - S. The starts mod G
  // run through the multiples of d = gcd(S, G), each once per G/d blocks, and W/S is a
  // multiple of G/d (W is a multiple of both S and G): so, in O(1) and without overflow,
  // (W/S) / (G/d) periods with (G - S)/d + 1 good starts each when S <= G, none otherwise.
  const std::int64_t d = std::gcd(size, g);
  const std::int64_t groups = w / size;
  const std::int64_t periods = groups / (g / d);
  entry.groups_within_node = size <= g ? periods * ((g - size) / d + 1) : 0;
  entry.groups_across_nodes = groups - entry.groups_within_node;
  return entry;
}

namespace {

bool is_preset_tensor_mode(std::string_view name) {
  return name == "tensor" || name == "1d" || name == "sequence" || name.starts_with("2d_") ||
         name.starts_with("2p5d_") || name.starts_with("3d_");
}

// A tensor size below the current one that divides G and makes a valid configuration
// with everything else unchanged: the largest of a bounded set of candidates, gcd(T, G)
// and the powers of two and depth times powers of four that divide G (which hold every
// square, cube and depth * square the tensor modes accept among G's power-of-two
// divisors). At most ~190 candidates, each checked in O(1): no loop down from G, which
// may be 2^62. Nothing when none but 1 fits.
std::optional<std::int64_t> tensor_size_that_fits(const ParallelConfig& config, std::int64_t gpus_per_node,
                                                  std::int64_t* steps) {
  std::vector<std::int64_t> candidates = {std::gcd(config.tensor_size, gpus_per_node)};
  for (std::int64_t power = 2; power > 0 && power <= gpus_per_node; power = power <= INT64_MAX / 2 ? power * 2 : 0) {
    candidates.push_back(power);
    if (config.depth && *config.depth > 1 && power <= INT64_MAX / *config.depth) {
      candidates.push_back(*config.depth * power);
    }
  }
  std::optional<std::int64_t> best;
  for (const std::int64_t size : candidates) {
    if (steps != nullptr) ++*steps;
    if (size <= 1 || size >= config.tensor_size || gpus_per_node % size != 0 || (best && size <= *best)) continue;
    ParallelConfig candidate = config;
    candidate.tensor_size = size;
    try {
      validate(candidate);
      best = size;
    } catch (const ConfigError&) {
    }
  }
  return best;
}

// A node size of at least G that the tensor size divides and that divides W, in O(1):
// the next multiple of T from G when it divides W, otherwise lcm(T, G), which always
// does (W is a multiple of both). Not always the smallest such size (finding that needs
// W's divisors), but always a valid one.
std::int64_t node_size_that_fits(std::int64_t world_size, std::int64_t tensor_size, std::int64_t gpus_per_node) {
  const std::int64_t next = tensor_size * ((gpus_per_node + tensor_size - 1) / tensor_size);
  if (next <= world_size && world_size % next == 0) return next;
  return std::lcm(tensor_size, gpus_per_node);
}

std::string fix_for(const Layout& layout, const NodeMap& nodes, const KindLocality& mode, std::int64_t* steps) {
  const std::int64_t t = layout.tensor_size();
  if (!is_preset_tensor_mode(mode.name) || layout.is_mesh()) {
    // A mesh group: speak of its own dimensions, whatever they are called.
    const auto kind = layout.find_group_kind(mode.name);
    const std::string dims = kind ? fmt::format("{}", fmt::join(layout.group_kinds()[*kind].dims, ", ")) : mode.name;
    const std::string per_node = nodes.gpus_per_node() ? fmt::format("the {} ranks per node", *nodes.gpus_per_node())
                                                       : std::string("the ranks per node");
    return fmt::format("list {} first in --mesh (the fastest dimensions), with sizes whose product ({}) divides {}",
                       dims, mode.group_size, per_node);
  }
  if (!nodes.gpus_per_node()) {
    return fmt::format(
        "place ranks in blocks (e.g. mpirun --map-by slot, Slurm --distribution=block) with a multiple of {} ranks "
        "per node",
        t);
  }
  const std::int64_t g = *nodes.gpus_per_node();
  std::string fix = fmt::format("a tensor size that divides {}", g);
  if (const auto size = tensor_size_that_fits(layout.config(), g, steps)) {
    fix += fmt::format(" (--tensor {} is valid here)", *size);
  }
  return fix + fmt::format(", or nodes of a multiple of {} GPUs (--gpus-per-node {})", t,
                           node_size_that_fits(layout.world_size(), t, g));
}

}  // namespace

std::vector<std::string> locality_warnings(const Layout& layout, const NodeMap& nodes,
                                           const std::vector<KindLocality>& modes, std::int64_t* steps) {
  std::vector<std::string> warnings;
  const std::string node_text =
      nodes.gpus_per_node() ? fmt::format("one node of {} GPUs", *nodes.gpus_per_node()) : std::string("one node");
  for (const KindLocality& mode : modes) {
    if (steps != nullptr) ++*steps;
    if (!mode.bandwidth_hungry || mode.groups_across_nodes == 0) continue;
    warnings.push_back(fmt::format(
        "{} groups cross nodes: {} of {} groups of {} ranks span more than {}, so tensor-parallel traffic leaves "
        "the node (NVLink) for the network; fix: {}",
        mode.name, mode.groups_across_nodes, mode.groups_within_node + mode.groups_across_nodes, mode.group_size,
        node_text, fix_for(layout, nodes, mode, steps)));
  }
  return warnings;
}

}  // namespace pgroups
