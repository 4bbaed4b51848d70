// Layout's queries: every answer read from the lowered mesh and kinds, whichever
// notation the configuration was written in.

#include "pgroups/layout/layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>

#include "lowering.hpp"
#include "pgroups/common/error.hpp"
#include "world_rank.hpp"

namespace pgroups {

using detail::find_dim;
using detail::printable;

void validate(const ParallelConfig& config) {
  if (config.mesh || !config.rank_map.empty()) {
    (void)Layout(config);
  } else {
    (void)detail::check_preset(config);
  }
}

Layout::Layout(const ParallelConfig& config) : Layout(config.mesh ? lower_mesh(config) : lower_presets(config)) {}

Layout::Layout(Lowered lowered)
    : lowered_(std::move(lowered)), rank_map_(lowered_.config.rank_map, lowered_.config.world_size) {
  for (std::size_t k = 0; k < lowered_.shapes.size(); ++k) {
    const KindShape& s = lowered_.shapes[k];
    const Mesh& mesh = mesh_of(s);
    int varying = 0;
    for (std::size_t d = 0; d < mesh.dims().size(); ++d) {
      if ((s.varying >> d & 1U) != 0 && mesh.dims()[d].size > 1) ++varying;
    }
    ordered_.push_back(varying <= 1);
  }
  if (!rank_map_.identity()) check_map_order();
  mode_kinds_.fill(kNoKind);
  for (std::size_t k = 0; k < lowered_.kinds.size(); ++k) {
    if (const auto mode = lowered_.kinds[k].mode) {
      modes_.push_back(*mode);
      mode_kinds_[static_cast<std::size_t>(*mode)] = k;
    }
  }
}

std::optional<std::size_t> Layout::find_group_kind(std::string_view name) const {
  for (std::size_t k = 0; k < lowered_.kinds.size(); ++k) {
    if (lowered_.kinds[k].name == name) return k;
  }
  if (!is_mesh() || name == kEmbeddingGroup || name == kPositionEmbeddingGroup) return std::nullopt;
  DimMask mask = 0;
  for (std::string_view part : split_group_token(name)) {
    const auto index = find_dim(lowered_.mesh, part);
    if (!index || (mask >> *index & 1U)) return std::nullopt;
    mask |= DimMask{1} << *index;
  }
  for (std::size_t k = 0; k < lowered_.kinds.size(); ++k) {
    if (lowered_.shapes[k].pick == KindShape::Pick::all && lowered_.shapes[k].varying == mask) return k;
  }
  return std::nullopt;
}

std::size_t Layout::group_kind_index(std::string_view name) const {
  if (const auto kind = find_group_kind(name)) return *kind;
  std::vector<std::string_view> names;
  for (const GroupKind& kind : lowered_.kinds) names.emplace_back(kind.name);
  throw StateError(fmt::format("group kind '{}' is not created for {}; the kinds are: {}{}", printable(name),
                               describe(lowered_.config), fmt::join(names, ", "), detail::suggest_dim(name, names)));
}

std::size_t Layout::kind_of(ParallelMode mode) const {
  // A value that is no enumerator (a cast from a wrong integer) is a ConfigError naming
  // it (mode_name throws), never an index past the table.
  if (static_cast<std::size_t>(mode) >= mode_kinds_.size()) (void)mode_name(mode);
  const std::size_t kind = mode_kinds_[static_cast<std::size_t>(mode)];
  if (kind == kNoKind) {
    std::vector<std::string_view> names;
    for (ParallelMode m : modes_) names.push_back(mode_name(m));
    throw StateError(fmt::format(
        "mode {} is not created for {}; the modes are: {}", mode_name(mode), describe(lowered_.config),
        names.empty() ? std::string("none (a mesh has group kinds)") : fmt::format("{}", fmt::join(names, ", "))));
  }
  return kind;
}

bool Layout::has_kind(ParallelMode mode) const noexcept {
  const auto index = static_cast<std::size_t>(mode);
  return index < mode_kinds_.size() && mode_kinds_[index] != kNoKind;
}

const Layout::KindShape& Layout::shape(std::size_t kind) const {
  if (kind >= lowered_.kinds.size()) {
    throw StateError(fmt::format("group kind index {} is out of range: {} has {} kinds", kind,
                                 describe(lowered_.config), lowered_.kinds.size()));
  }
  return lowered_.shapes[kind];
}

PartitionKey Layout::partition_key(std::size_t kind) const {
  const KindShape& s = shape(kind);
  const PartitionKey::Pick pick = s.pick == KindShape::Pick::all     ? PartitionKey::Pick::all
                                  : s.pick == KindShape::Pick::first ? PartitionKey::Pick::first
                                                                     : PartitionKey::Pick::first_and_last;
  PartitionKey key = partition_key_of(mesh_of(s), s.varying, pick);
  key.rank_map = rank_map_.fingerprint();
  return key;
}

void Layout::check_rank(std::int64_t rank) const { detail::check_world_rank(rank, lowered_.config.world_size); }

std::int64_t Layout::mesh_rank(std::int64_t rank) const {
  check_rank(rank);
  return rank_map_.mesh_rank(rank);
}

std::vector<std::int64_t> Layout::mapped_group(std::int64_t mesh_rank, const KindShape& s) const {
  std::vector<std::int64_t> group = mesh_of(s).group_of(mesh_rank, s.varying);
  for (std::int64_t& member : group) member = rank_map_.launcher_rank(member);
  std::sort(group.begin(), group.end());
  return group;
}

bool Layout::keeps_mesh_order(std::size_t kind) const {
  const KindShape& s = shape(kind);
  if (keeps_order(kind)) return true;
  const Mesh& mesh = mesh_of(s);
  const std::int64_t size = mesh.group_size(s.varying);
  for (std::int64_t g = 0; g < mesh.group_count(s.varying); ++g) {
    const std::int64_t leader = mesh.group_leader(g, s.varying);
    std::int64_t previous = rank_map_.launcher_rank(leader);
    for (std::int64_t i = 1; i < size; ++i) {
      const std::int64_t next = rank_map_.launcher_rank(mesh.group_member(leader, s.varying, i));
      if (next < previous) return false;
      previous = next;
    }
  }
  return true;
}

// A kind of one dimension is numbered by its coordinate everywhere (the pipeline stage, a
// DeviceMesh coordinate, a shard index) and by its ascending launcher ranks in torch and MPI:
// under a map they must be the same order. Each step of each such dimension is one
// comparison, so the whole check is O(world size) per varying dimension of each kind.
void Layout::check_map_order() const {
  for (std::size_t k = 0; k < lowered_.shapes.size(); ++k) {
    const KindShape& s = lowered_.shapes[k];
    const Mesh& mesh = mesh_of(s);
    for (std::size_t d = 0; d < mesh.dims().size(); ++d) {
      if ((s.varying >> d & 1U) == 0 || mesh.dims()[d].size <= 1) continue;
      if (!ordered_[k]) break;
      const std::int64_t stride = mesh.stride(d);
      const std::int64_t size = mesh.dims()[d].size;
      for (std::int64_t r = 0; r < mesh.size(); ++r) {
        if (mesh.coordinate(r, d) == size - 1) continue;
        // The block mesh of legacy sequence_dp is a reshaping of the same ranks.
        if (rank_map_.launcher_rank(r) < rank_map_.launcher_rank(r + stride)) continue;
        std::vector<std::int64_t> group = mesh.group_of(r, s.varying);
        for (std::int64_t& member : group) member = rank_map_.launcher_rank(member);
        throw ConfigError(fmt::format(
            "rank map breaks the order of kind '{}': its group of mesh ranks {} runs on launcher ranks {}, which do "
            "not "
            "ascend along {}; torch and MPI number a group by ascending rank, so a kind of one dimension must keep its "
            "mesh order (the pipeline stage, the DeviceMesh coordinate and the group rank would disagree)",
            lowered_.kinds[k].name, rank_list_excerpt(mesh.group_of(r, s.varying)), rank_list_excerpt(group),
            mesh.dims()[d].name));
      }
    }
  }
}

void Layout::check_member(std::int64_t rank, std::size_t kind) const {
  if (!is_member(rank, kind)) {
    throw StateError(fmt::format("rank {} is in no group of kind '{}' (only the {} pipeline stage{} are)", rank,
                                 lowered_.kinds[kind].name,
                                 lowered_.shapes[kind].pick == KindShape::Pick::first ? "first" : "first and last",
                                 lowered_.shapes[kind].pick == KindShape::Pick::first ? " ranks" : "s' ranks"));
  }
}

std::vector<Coordinate> Layout::coordinates(std::int64_t launcher_rank) const {
  const std::int64_t rank = mesh_rank(launcher_rank);
  if (is_mesh()) {
    std::vector<Coordinate> coords;
    const auto dims = lowered_.mesh.dims();
    for (std::size_t i = dims.size(); i-- > 0;) {
      coords.push_back({dims[i].name, lowered_.mesh.coordinate(rank, i), dims[i].size});
    }
    return coords;
  }
  // A preset's mesh is its tensor dimensions, then pipe, then data (preset_lowering.cpp):
  // data and pipe are its two slowest coordinates, the tensor index the rank's place among
  // the tensor dimensions, so that this answer reads the lowered mesh as every other does.
  const Mesh& mesh = lowered_.mesh;
  const auto dims = mesh.dims();
  const std::size_t n = dims.size();
  const DimMask tensor_dims = (DimMask{1} << (n - 2)) - 1;
  std::vector<Coordinate> coords = {
      {dims[n - 1].name, mesh.coordinate(rank, n - 1), dims[n - 1].size},
      {dims[n - 2].name, mesh.coordinate(rank, n - 2), dims[n - 2].size},
      {"tensor", mesh.local_rank(rank, tensor_dims), mesh.group_size(tensor_dims)},
  };
  if (lowered_.grid_dim > 0) {
    for (std::size_t i = 0; i + 2 < n; ++i) coords.push_back({dims[i].name, mesh.coordinate(rank, i), dims[i].size});
  }
  return coords;
}

// ---- Kinds ----------------------------------------------------------------------------
// A partial kind (embd, pos_embd) keeps the pp groups' colours and leaders and picks
// position 0 (and the last position) of each.

std::int64_t Layout::group_size(std::size_t kind) const {
  const KindShape& s = shape(kind);
  const std::int64_t full = mesh_of(s).group_size(s.varying);
  switch (s.pick) {
    case KindShape::Pick::first: return 1;
    case KindShape::Pick::first_and_last: return full > 1 ? 2 : 1;
    default: return full;
  }
}

std::int64_t Layout::group_count(std::size_t kind) const {
  const KindShape& s = shape(kind);
  return mesh_of(s).group_count(s.varying);
}

bool Layout::is_member(std::int64_t launcher_rank, std::size_t kind) const {
  const KindShape& s = shape(kind);
  const std::int64_t rank = mesh_rank(launcher_rank);
  if (s.pick == KindShape::Pick::all) return true;
  const std::int64_t position = lowered_.mesh.local_rank(rank, s.varying);
  const std::int64_t last = lowered_.mesh.group_size(s.varying) - 1;
  return position == 0 || (s.pick == KindShape::Pick::first_and_last && position == last);
}

std::int64_t Layout::local_rank(std::int64_t launcher_rank, std::size_t kind) const {
  const KindShape& s = shape(kind);
  check_member(launcher_rank, kind);
  const std::int64_t rank = rank_map_.mesh_rank(launcher_rank);
  if (!keeps_order(kind)) {
    const std::vector<std::int64_t> group = mapped_group(rank, s);
    return std::lower_bound(group.begin(), group.end(), launcher_rank) - group.begin();
  }
  const std::int64_t position = mesh_of(s).local_rank(rank, s.varying);
  return s.pick == KindShape::Pick::all ? position : (position == 0 ? 0 : 1);
}

std::int64_t Layout::group_index(std::int64_t rank, std::size_t kind) const {
  const KindShape& s = shape(kind);
  check_member(rank, kind);
  return mesh_of(s).group_index(rank_map_.mesh_rank(rank), s.varying);
}

std::int64_t Layout::group_leader(std::size_t kind, std::int64_t group_index) const {
  const KindShape& s = shape(kind);
  const std::int64_t leader = mesh_of(s).group_leader(group_index, s.varying);
  if (keeps_order(kind)) return rank_map_.launcher_rank(leader);
  return mapped_group(leader, s).front();
}

std::int64_t Layout::group_member(std::int64_t launcher_rank, std::size_t kind, std::int64_t index) const {
  const KindShape& s = shape(kind);
  check_member(launcher_rank, kind);
  const std::int64_t rank = rank_map_.mesh_rank(launcher_rank);
  if (!keeps_order(kind)) {
    const std::int64_t size = group_size(kind);
    if (index < 0 || index >= size) {
      throw ConfigError(fmt::format("member index {} is outside a group of {} ranks", index, size));
    }
    return mapped_group(rank, s)[static_cast<std::size_t>(index)];
  }
  if (s.pick == KindShape::Pick::all) {
    return rank_map_.launcher_rank(mesh_of(s).group_member(rank, s.varying, index));
  }
  const std::int64_t size = group_size(kind);
  if (index < 0 || index >= size) {
    throw ConfigError(fmt::format("member index {} is outside a group of {} ranks", index, size));
  }
  return rank_map_.launcher_rank(
      lowered_.mesh.group_member(rank, s.varying, index == 0 ? 0 : lowered_.mesh.group_size(s.varying) - 1));
}

std::vector<std::int64_t> Layout::group_of(std::int64_t rank, std::size_t kind) const {
  const KindShape& s = shape(kind);
  check_member(rank, kind);
  if (s.pick == KindShape::Pick::all) {
    if (rank_map_.identity()) return mesh_of(s).group_of(rank, s.varying);
    return mapped_group(rank_map_.mesh_rank(rank), s);
  }
  std::vector<std::int64_t> members;
  for (std::int64_t i = 0; i < group_size(kind); ++i) members.push_back(group_member(rank, kind, i));
  return members;
}

std::vector<std::vector<std::int64_t>> Layout::groups(std::size_t kind) const {
  const KindShape& s = shape(kind);
  std::vector<std::vector<std::int64_t>> all = mesh_of(s).groups(s.varying);
  if (!rank_map_.identity()) {
    for (std::vector<std::int64_t>& group : all) {
      for (std::int64_t& member : group) member = rank_map_.launcher_rank(member);
      std::sort(group.begin(), group.end());
    }
  }
  if (s.pick == KindShape::Pick::all) return all;
  for (std::vector<std::int64_t>& group : all) {
    std::vector<std::int64_t> picked = {group.front()};
    if (s.pick == KindShape::Pick::first_and_last && group.size() > 1) picked.push_back(group.back());
    group = std::move(picked);
  }
  return all;
}

std::int64_t Layout::pipeline_stage(std::int64_t launcher_rank) const {
  const std::int64_t rank = mesh_rank(launcher_rank);
  return lowered_.pipeline_dim ? lowered_.mesh.coordinate(rank, *lowered_.pipeline_dim) : 0;
}

std::int64_t Layout::seed(std::int64_t rank, std::size_t kind) const {
  (void)shape(kind);
  check_rank(rank);
  if (lowered_.kinds[kind].mode != ParallelMode::tensor) return lowered_.config.seed;
  const std::int64_t tensor_local = local_rank(rank, kind);
  const std::int64_t stage = pipeline_stage(rank);
  // Wrapping arithmetic: a seed only has to be deterministic, and plans of absurd sizes
  // must not overflow a signed integer.
  const auto seed = static_cast<std::uint64_t>(lowered_.config.seed) + static_cast<std::uint64_t>(tensor_local) +
                    1024U * static_cast<std::uint64_t>(stage);
  return static_cast<std::int64_t>(seed);
}

// ---- Modes forward to their kinds -----------------------------------------------------

std::int64_t Layout::group_size(ParallelMode mode) const { return group_size(kind_of(mode)); }
std::int64_t Layout::group_count(ParallelMode mode) const { return group_count(kind_of(mode)); }
std::int64_t Layout::local_rank(std::int64_t rank, ParallelMode mode) const { return local_rank(rank, kind_of(mode)); }
std::int64_t Layout::group_index(std::int64_t rank, ParallelMode mode) const {
  return group_index(rank, kind_of(mode));
}
std::int64_t Layout::group_leader(ParallelMode mode, std::int64_t group_index) const {
  return group_leader(kind_of(mode), group_index);
}
std::int64_t Layout::group_member(std::int64_t rank, ParallelMode mode, std::int64_t index) const {
  return group_member(rank, kind_of(mode), index);
}
std::vector<std::int64_t> Layout::group_of(std::int64_t rank, ParallelMode mode) const {
  return group_of(rank, kind_of(mode));
}
std::vector<std::vector<std::int64_t>> Layout::groups(ParallelMode mode) const { return groups(kind_of(mode)); }
std::int64_t Layout::seed(std::int64_t rank, ParallelMode mode) const { return seed(rank, kind_of(mode)); }

}  // namespace pgroups
