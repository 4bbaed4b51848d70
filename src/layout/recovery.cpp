// The layout of a job's survivors: whole replicas of one dimension dropped or added, every
// other dimension kept, computed from the lost and joining ranks alone.

#include "pgroups/layout/recovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "lowering.hpp"
#include "pgroups/common/error.hpp"

namespace pgroups {

struct Recovery::Parts {
  std::size_t shrink = 0;
  std::string shrink_name;
  std::int64_t replica_size = 1;
  std::int64_t surviving = 0;
  std::int64_t added = 0;
  std::vector<std::int64_t> lost;
  std::vector<std::int64_t> joining;
  std::vector<std::int64_t> dropped;
  ParallelConfig config;
};

namespace {

constexpr std::size_t kNamedInMessage = 8;

// A replica's ranks vary every dimension but the shrinking one.
DimMask other_dims(const Mesh& mesh, std::size_t shrink) {
  const std::size_t n = mesh.dims().size();
  const DimMask all = n >= 32 ? ~DimMask{0} : (DimMask{1} << n) - 1;
  return all & ~(DimMask{1} << shrink);
}

std::string joined_ranks(std::span<const std::int64_t> ranks) {
  std::string out;
  const std::size_t shown = std::min(ranks.size(), kNamedInMessage);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (shown < ranks.size()) out += fmt::format(" and {} more", ranks.size() - shown);
  return out;
}

// A preset's dimensions go by the mesh names of the lowering ("data", "pipe", "tensor");
// the mesh spellings a user knows from the other notation name them too.
std::string preset_dim_name(const Layout& layout, std::string_view asked) {
  std::string_view name = asked;
  if (asked.empty() || asked == "dp") name = "data";
  if (asked == "pp" || asked == "pipeline") name = "pipe";
  if (asked == "tp") name = "tensor";
  if (name == "data" || name == "pipe") return std::string(name);
  const TensorMode mode = layout.config().tensor_mode;
  if (name == "tensor") {
    if (mode == TensorMode::tensor_2d || mode == TensorMode::tensor_2p5d || mode == TensorMode::tensor_3d) {
      throw ConfigError(fmt::format(
          "the tensor of mode {} cannot shrink: it is a grid of several dimensions, not one (shrink data or pipe)",
          tensor_mode_name(mode)));
    }
    return "tensor";
  }
  throw ConfigError(
      fmt::format("shrinking dimension '{}' is not one of this preset's: data (dp), pipe (pp), tensor (tp)",
                  detail::printable(asked)));
}

std::size_t shrink_index(const Layout& layout, std::string_view asked, std::string& name) {
  if (!layout.is_mesh()) {
    name = preset_dim_name(layout, asked);
    return *detail::find_dim(layout.mesh(), name);
  }
  name = asked.empty() ? std::string("dp") : std::string(asked);
  if (const auto index = detail::find_dim(layout.mesh(), name)) return *index;
  std::vector<std::string_view> names;
  std::string listed;
  for (const MeshDim& dim : layout.mesh().dims()) {
    names.push_back(dim.name);
    listed += (listed.empty() ? "" : ", ") + dim.name;
  }
  throw ConfigError(fmt::format("shrinking dimension '{}' is not a dimension of the mesh: its dimensions are {}{}",
                                detail::printable(name), listed, detail::suggest_dim(name, names)));
}

void check_unique(std::vector<std::int64_t>& ranks, std::string_view what) {
  std::sort(ranks.begin(), ranks.end());
  const auto twice = std::adjacent_find(ranks.begin(), ranks.end());
  if (twice != ranks.end()) {
    throw ConfigError(fmt::format("rank {} is listed twice as {}: each rank may be named once", *twice, what));
  }
}

// Every replica is gone: name each dropped replica and the lost ranks that dropped it.
[[noreturn]] void throw_nothing_survives(const Layout& layout, std::size_t shrink, std::string_view shrink_name,
                                         std::span<const std::int64_t> lost, std::int64_t replica_size,
                                         std::size_t joining) {
  std::map<std::int64_t, std::vector<std::int64_t>> by_replica;
  for (std::int64_t rank : lost) {
    by_replica[layout.mesh().coordinate(layout.rank_map().mesh_rank(rank), shrink)].push_back(rank);
  }
  std::string replicas;
  std::size_t shown = 0;
  for (const auto& [coordinate, ranks] : by_replica) {
    if (shown++ == kNamedInMessage) {
      replicas += fmt::format("; and {} more", by_replica.size() - kNamedInMessage);
      break;
    }
    replicas += fmt::format("{}{}={}: lost rank{} {}", replicas.empty() ? "" : "; ", shrink_name, coordinate,
                            ranks.size() == 1 ? "" : "s", joined_ranks(ranks));
  }
  throw ConfigError(
      fmt::format("no layout remains: every replica of {} lost a rank ({}), and a replica with a lost rank is dropped; "
                  "{} joining rank{} fill no whole replica of {} ranks",
                  shrink_name, replicas, joining, joining == 1 ? "" : "s", replica_size));
}

ParallelConfig resized_config(const Layout& layout, std::string_view shrink_name, std::int64_t new_size,
                              std::int64_t replica_size) {
  ParallelConfig config = layout.config();
  // The survivors stay on their old nodes, which are no consecutive blocks of new ranks.
  config.gpus_per_node.reset();
  // New ranks are the new mesh ranks: where each runs is the recovery's own rank map (the
  // old map composed with the renumbering), never the old map, which is of another world.
  config.rank_map.clear();
  std::int64_t world = 0;
  if (__builtin_mul_overflow(replica_size, new_size, &world)) {
    throw ConfigError(fmt::format("{} replicas of {} ranks overflow 64 bits", new_size, replica_size));
  }
  if (config.mesh) {
    for (MeshDim& dim : config.mesh->dims) {
      if (dim.name == shrink_name) dim.size = new_size;
    }
    if (config.world_size != 0) config.world_size = world;
    return config;
  }
  config.world_size = world;
  if (shrink_name == "pipe") config.pipeline = new_size;
  if (shrink_name == "tensor") config.tensor_size = new_size;
  return config;
}

}  // namespace

std::string_view rank_fate_name(RankFate fate) {
  switch (fate) {
    case RankFate::active: return "active";
    case RankFate::spare: return "spare";
    case RankFate::lost: return "lost";
  }
  throw ConfigError(fmt::format("RankFate {} is not a rank fate", static_cast<int>(fate)));
}

RecoveryRequest recovery_request_from_alive(std::int64_t world_size, std::span<const std::int64_t> alive,
                                            std::string shrink) {
  std::vector<std::int64_t> sorted(alive.begin(), alive.end());
  for (std::int64_t id : sorted) {
    if (id < 0) throw ConfigError(fmt::format("alive rank {} is invalid: ranks are non-negative", id));
  }
  check_unique(sorted, "alive");
  RecoveryRequest request;
  request.shrink = std::move(shrink);
  // The lost ranks are the gaps between the alive ones: O(|alive| + |lost|), never O(W).
  const auto in_world = std::lower_bound(sorted.begin(), sorted.end(), world_size);
  const std::int64_t missing = world_size - (in_world - sorted.begin());
  if (missing > kMaxListedRanks) {
    throw ConfigError(
        fmt::format("the alive ranks leave {} of the world's {} ranks lost: at most {} lost ranks are listed", missing,
                    world_size, kMaxListedRanks));
  }
  std::int64_t expected = 0;
  for (auto it = sorted.begin(); it != in_world; ++it) {
    for (; expected < *it; ++expected) request.lost.push_back(expected);
    expected = *it + 1;
  }
  for (; expected < world_size; ++expected) request.lost.push_back(expected);
  auto next = in_world;
  request.joining.assign(next, sorted.end());
  return request;
}

bool is_data_dim(std::string_view name) noexcept {
  return name == "dp" || name == "data" || name == "ddp" || name == "fsdp" || name == "hsdp" ||
         name.substr(0, 3) == "dp_";
}

Resize resized(const Layout& layout, std::int64_t world, std::string_view shrink) {
  if (world < 1) throw ConfigError(fmt::format("world size {} is invalid: a resized job has at least one rank", world));
  std::string shrink_name;
  const std::size_t index = shrink_index(layout, shrink, shrink_name);
  const std::int64_t replica_size = layout.world_size() / layout.mesh().dims()[index].size;
  const std::int64_t replicas = world / replica_size;
  if (replicas == 0) {
    throw ConfigError(fmt::format(
        "a world of {} ranks holds no whole replica of {}: one replica (every dimension but {}) has {} ranks", world,
        shrink_name, shrink_name, replica_size));
  }
  ParallelConfig config = resized_config(layout, shrink_name, replicas, replica_size);
  // A fresh world starts on whole nodes again when it fills them.
  const std::optional<std::int64_t> per_node = layout.config().gpus_per_node;
  if (per_node && (replicas * replica_size) % *per_node == 0) config.gpus_per_node = per_node;
  return Resize{Layout(config),          shrink_name, replica_size, replicas, world - replicas * replica_size,
                is_data_dim(shrink_name)};
}

Recovery::Parts Recovery::compute_parts(const Layout& layout, RecoveryRequest request) {
  Parts parts;
  parts.shrink = shrink_index(layout, request.shrink, parts.shrink_name);
  const std::int64_t w = layout.world_size();
  const std::int64_t size = layout.mesh().dims()[parts.shrink].size;
  parts.replica_size = w / size;
  for (std::int64_t rank : request.lost) {
    if (rank < 0 || rank >= w) {
      throw ConfigError(
          fmt::format("lost rank {} is outside the world of {} ranks: a lost rank is in [0, {})", rank, w, w));
    }
  }
  for (std::int64_t id : request.joining) {
    if (id < w) {
      throw ConfigError(fmt::format(
          "joining rank {} is not a new process: the old world has ranks [0, {}), joining ranks are numbered from {}",
          id, w, w));
    }
  }
  check_unique(request.lost, "lost");
  check_unique(request.joining, "joining");
  parts.lost = std::move(request.lost);
  parts.joining = std::move(request.joining);
  // Lost ranks are launcher ranks: the old rank map says which mesh rank, so which replica.
  for (std::int64_t rank : parts.lost) {
    parts.dropped.push_back(layout.mesh().coordinate(layout.rank_map().mesh_rank(rank), parts.shrink));
  }
  std::sort(parts.dropped.begin(), parts.dropped.end());
  parts.dropped.erase(std::unique(parts.dropped.begin(), parts.dropped.end()), parts.dropped.end());
  parts.surviving = size - static_cast<std::int64_t>(parts.dropped.size());
  parts.added = static_cast<std::int64_t>(parts.joining.size()) / parts.replica_size;
  if (parts.surviving + parts.added == 0) {
    throw_nothing_survives(layout, parts.shrink, parts.shrink_name, parts.lost, parts.replica_size,
                           parts.joining.size());
  }
  parts.config = resized_config(layout, parts.shrink_name, parts.surviving + parts.added, parts.replica_size);
  // Legacy sequence_dp's groups are blocks of W / pipeline consecutive ranks: a formula of the
  // world size, not a mapping of the old groups, so in a world of another size its blocks
  // would cut or merge the survivors' groups.
  if (layout.config().legacy_sequence_dp && parts.config.world_size != w) {
    throw ConfigError(fmt::format(
        "a layout with legacy_sequence_dp cannot shrink or grow from {} to {} ranks: its sequence_dp groups are "
        "blocks of world size / pipeline consecutive ranks, which in the new world would not be the survivors' old "
        "groups (plan the job without legacy_sequence_dp, or replace the lost replicas with as many joining ranks)",
        w, parts.config.world_size));
  }
  return parts;
}

Recovery::Recovery(const Layout& old_layout, RecoveryRequest request)
    : Recovery(old_layout, compute_parts(old_layout, std::move(request))) {}

Recovery::Recovery(const Layout& old_layout, Parts parts)
    : old_(old_layout),
      shrink_(parts.shrink),
      shrink_name_(std::move(parts.shrink_name)),
      replica_size_(parts.replica_size),
      surviving_(parts.surviving),
      added_(parts.added),
      lost_(std::move(parts.lost)),
      joining_(std::move(parts.joining)),
      dropped_(std::move(parts.dropped)),
      new_(parts.config) {
  for (std::size_t j = 0; j < dropped_.size(); ++j)
    dropped_shifted_.push_back(dropped_[j] - static_cast<std::int64_t>(j));
}

bool Recovery::is_dropped(std::int64_t coordinate) const {
  return std::binary_search(dropped_.begin(), dropped_.end(), coordinate);
}

std::int64_t Recovery::spare_count() const noexcept {
  const auto joined = added_ * replica_size_;
  return static_cast<std::int64_t>(dropped_.size()) * replica_size_ - static_cast<std::int64_t>(lost_.size()) +
         (static_cast<std::int64_t>(joining_.size()) - joined);
}

std::int64_t Recovery::renumbered_count() const {
  const std::int64_t old_size = old_.mesh().dims()[shrink_].size;
  if (!old_.rank_map().identity()) {
    // Old ranks are launcher ranks here: whether one keeps its number is the map's to say,
    // entry by entry (the map already holds W entries, so this is no larger than it).
    std::int64_t moved = 0;
    for (std::int64_t r = 0; r < new_.world_size(); ++r) {
      const std::int64_t old = old_rank(r);
      moved += old < old_.world_size() && old != r ? 1 : 0;
    }
    return moved;
  }
  // A survivor at old coordinate c keeps coordinate c - b (b: the dropped replicas below c),
  // its faster coordinates f and its slower ones p, while the slower strides follow the
  // dimension's size: old rank f + c*s + p*old_size*s, new f + (c-b)*s + p*new_size*s. They
  // are equal exactly when b == p * growth: with no growth, for every p of a replica with
  // nothing dropped below it; otherwise for the one p = b / growth, where that is a slower
  // coordinate (joiners that grow the dimension make it one for replicas above a gap).
  // b is constant between dropped replicas: O(|dropped|), whatever the world size.
  const std::int64_t stride = old_.mesh().stride(shrink_);
  const std::int64_t slower = replica_size_ / stride;  // the combinations of the slower coordinates
  const std::int64_t growth = new_.mesh().dims()[shrink_].size - old_size;
  std::int64_t unchanged = 0;
  std::size_t below = 0;  // dropped replicas below the new coordinates [from, to)
  for (std::int64_t from = 0; from < surviving_;) {
    while (below < dropped_shifted_.size() && dropped_shifted_[below] <= from) ++below;
    const std::int64_t to =
        below < dropped_shifted_.size() ? std::min(dropped_shifted_[below], surviving_) : surviving_;
    const auto b = static_cast<std::int64_t>(below);
    if (growth == 0) {
      unchanged += b == 0 ? (to - from) * replica_size_ : 0;
    } else if (b % growth == 0 && b / growth >= 0 && b / growth < slower) {
      unchanged += (to - from) * stride;
    }
    from = to;
  }
  return surviving_ * replica_size_ - unchanged;
}

std::int64_t Recovery::replica_of(std::int64_t old_rank) const {
  if (old_rank < 0 || old_rank >= old_.world_size()) {
    throw ConfigError(fmt::format("rank {} is not a rank of the old world [0, {})", old_rank, old_.world_size()));
  }
  return old_.mesh().coordinate(old_.rank_map().mesh_rank(old_rank), shrink_);
}

std::int64_t Recovery::replica_member(std::int64_t coordinate, std::int64_t index) const {
  const Mesh& mesh = old_.mesh();
  if (coordinate < 0 || coordinate >= mesh.dims()[shrink_].size || index < 0 || index >= replica_size_) {
    throw ConfigError(fmt::format("replica {}={} has no member {}: there are {} replicas of {} ranks", shrink_name_,
                                  coordinate, index, mesh.dims()[shrink_].size, replica_size_));
  }
  return old_.rank_map().launcher_rank(
      mesh.group_member(mesh.group_leader(coordinate, other_dims(mesh, shrink_)), other_dims(mesh, shrink_), index));
}

std::vector<std::int64_t> Recovery::spares() const {
  std::vector<std::int64_t> out;
  for (std::int64_t coordinate : dropped_) {
    for (std::int64_t i = 0; i < replica_size_; ++i) {
      const std::int64_t rank = replica_member(coordinate, i);
      if (!std::binary_search(lost_.begin(), lost_.end(), rank)) out.push_back(rank);
    }
  }
  std::sort(out.begin(), out.end());
  out.insert(out.end(), joining_.begin() + static_cast<std::ptrdiff_t>(added_ * replica_size_), joining_.end());
  return out;
}

std::int64_t Recovery::old_rank(std::int64_t new_rank) const {
  const Mesh& mesh = new_.mesh();
  if (new_rank < 0 || new_rank >= mesh.size()) {
    throw ConfigError(fmt::format("new rank {} is outside the new world of {} ranks", new_rank, mesh.size()));
  }
  std::vector<std::int64_t> coords = mesh.coordinates(new_rank);
  const std::int64_t kept = coords[shrink_];
  if (kept < surviving_) {
    const auto before =
        std::upper_bound(dropped_shifted_.begin(), dropped_shifted_.end(), kept) - dropped_shifted_.begin();
    coords[shrink_] = kept + before;
    return old_.rank_map().launcher_rank(old_.mesh().rank_of(coords));
  }
  // Within a new replica, joiners take its ranks in ascending order.
  const std::int64_t local = mesh.local_rank(new_rank, other_dims(mesh, shrink_));
  return joining_[static_cast<std::size_t>((kept - surviving_) * replica_size_ + local)];
}

std::optional<std::int64_t> Recovery::new_rank(std::int64_t old_rank) const {
  const std::int64_t w = old_.world_size();
  if (old_rank >= 0 && old_rank < w) {
    if (std::binary_search(lost_.begin(), lost_.end(), old_rank)) return std::nullopt;
    std::vector<std::int64_t> coords = old_.mesh().coordinates(old_.rank_map().mesh_rank(old_rank));
    const std::int64_t c = coords[shrink_];
    if (is_dropped(c)) return std::nullopt;
    coords[shrink_] = c - (std::lower_bound(dropped_.begin(), dropped_.end(), c) - dropped_.begin());
    return new_.mesh().rank_of(coords);
  }
  const auto found = std::lower_bound(joining_.begin(), joining_.end(), old_rank);
  if (old_rank < 0 || found == joining_.end() || *found != old_rank) {
    throw ConfigError(
        fmt::format("rank {} is neither a rank of the old world [0, {}) nor a joining rank", old_rank, w));
  }
  const std::int64_t j = found - joining_.begin();
  if (j >= added_ * replica_size_) return std::nullopt;
  const Mesh& mesh = new_.mesh();
  const std::int64_t replica = surviving_ + j / replica_size_;
  return mesh.group_member(mesh.group_leader(replica, other_dims(mesh, shrink_)), other_dims(mesh, shrink_),
                           j % replica_size_);
}

RankFate Recovery::fate(std::int64_t old_rank) const {
  if (new_rank(old_rank)) return RankFate::active;
  return std::binary_search(lost_.begin(), lost_.end(), old_rank) ? RankFate::lost : RankFate::spare;
}

std::vector<std::int64_t> Recovery::rank_map() const {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(new_.world_size()));
  for (std::int64_t r = 0; r < new_.world_size(); ++r) out.push_back(old_rank(r));
  return out;
}

RecoveryRequest node_loss_request(std::int64_t node, std::int64_t gpus_per_node, std::string shrink) {
  RecoveryRequest request;
  request.shrink = std::move(shrink);
  for (std::int64_t i = 0; i < gpus_per_node; ++i) request.lost.push_back(node * gpus_per_node + i);
  return request;
}

NodeLossWhatIf what_if_node_loss(const Layout& layout, std::int64_t gpus_per_node, std::string shrink) {
  const std::int64_t w = layout.world_size();
  if (gpus_per_node < 1 || w % gpus_per_node != 0) {
    throw ConfigError(
        fmt::format("what-if node needs nodes that the world fills: gpus per node {} does not divide world size {}",
                    gpus_per_node, w));
  }
  // A node's loss is a list of its ranks (node_loss_request), bounded as every list of lost ranks is.
  if (gpus_per_node > kMaxListedRanks) {
    throw ConfigError(
        fmt::format("what-if node answers for nodes of at most {} GPUs, not {}", kMaxListedRanks, gpus_per_node));
  }
  NodeLossWhatIf out;
  const std::size_t dim = shrink_index(layout, shrink, out.shrink_dim);
  const Mesh& mesh = layout.mesh();
  const std::int64_t size = mesh.dims()[dim].size;
  const std::int64_t stride = mesh.stride(dim);
  out.old_size = size;
  out.replica_size = w / size;
  out.gpus_per_node = gpus_per_node;
  out.node_count = w / gpus_per_node;
  if (out.node_count > kMaxWhatIfNodes) {
    throw ConfigError(fmt::format("what-if node answers for at most {} nodes; the world of {} ranks has {} of {} GPUs",
                                  kMaxWhatIfNodes, w, out.node_count, gpus_per_node));
  }
  const bool placed = !layout.rank_map().identity();
  const bool count_placed = placed && out.node_count <= kMaxWhatIfRenumberedWork / std::max<std::int64_t>(w, 1);
  std::map<std::int64_t, NodeLossClass> classes;
  std::vector<std::int64_t> coordinates;
  for (std::int64_t node = 0; node < out.node_count; ++node) {
    std::int64_t dropped = 0;
    std::int64_t first = 0;
    if (!placed) {
      // The node's ranks are a run of mesh ranks: the replicas they touch are a run of
      // consecutive values of rank / stride, taken modulo the dimension's size.
      const std::int64_t low = node * gpus_per_node / stride;
      const std::int64_t high = (node * gpus_per_node + gpus_per_node - 1) / stride;
      const std::int64_t run = high - low + 1;
      dropped = std::min(size, run);
      first = run >= size || low % size + run > size ? 0 : low % size;
    } else {
      coordinates.clear();
      for (std::int64_t i = 0; i < gpus_per_node; ++i) {
        coordinates.push_back(mesh.coordinate(layout.rank_map().mesh_rank(node * gpus_per_node + i), dim));
      }
      std::sort(coordinates.begin(), coordinates.end());
      dropped = std::unique(coordinates.begin(), coordinates.end()) - coordinates.begin();
      first = coordinates.front();
    }
    const std::int64_t surviving = size - dropped;
    std::int64_t renumbered = -1;
    if (surviving > 0 && !placed) {
      // Recovery::renumbered_count without joiners: ranks below the first dropped replica keep theirs.
      renumbered = surviving * out.replica_size - first * stride;
    } else if (surviving > 0 && count_placed) {
      renumbered = Recovery(layout, node_loss_request(node, gpus_per_node, out.shrink_dim)).renumbered_count();
    } else if (surviving == 0) {
      renumbered = 0;
    }
    auto [entry, added] = classes.try_emplace(dropped);
    NodeLossClass& c = entry->second;
    if (added) {
      c.dropped = dropped;
      c.first_node = node;
      c.new_size = surviving;
      c.spares = dropped * out.replica_size - gpus_per_node;
      c.renumbered_min = renumbered;
      c.renumbered_max = renumbered;
    }
    ++c.nodes;
    c.renumbered_min = std::min(c.renumbered_min, renumbered);
    c.renumbered_max = std::max(c.renumbered_max, renumbered);
  }
  for (auto& [dropped, c] : classes) out.classes.push_back(c);
  return out;
}

}  // namespace pgroups
