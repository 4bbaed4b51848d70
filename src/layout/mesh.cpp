#include "pgroups/layout/mesh.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "world_rank.hpp"

namespace pgroups {

Mesh::Mesh(std::vector<MeshDim> dims) : dims_(std::move(dims)) {
  if (dims_.empty()) throw ConfigError("a mesh needs at least one dimension");
  if (dims_.size() > kMaxDims) {
    throw ConfigError(fmt::format("a mesh has at most {} dimensions, got {}", kMaxDims, dims_.size()));
  }
  strides_.reserve(dims_.size());
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    const MeshDim& dim = dims_[i];
    if (dim.name.empty()) throw ConfigError(fmt::format("mesh dimension {} has an empty name", i));
    for (std::size_t j = 0; j < i; ++j) {
      if (dims_[j].name == dim.name) {
        throw ConfigError(fmt::format("mesh dimension name '{}' appears twice", dim.name));
      }
    }
    if (dim.size < 1) {
      throw ConfigError(fmt::format("mesh dimension '{}' has size {}, must be a positive integer", dim.name, dim.size));
    }
    strides_.push_back(size_);
    if (__builtin_mul_overflow(size_, dim.size, &size_)) {
      throw ConfigError(fmt::format("mesh of sizes [{}] has more than {} ranks (64-bit overflow)",
                                    fmt::join(sizes_of(dims_), ", "), std::numeric_limits<std::int64_t>::max()));
    }
  }
}

std::vector<std::int64_t> Mesh::sizes_of(std::span<const MeshDim> dims) {
  std::vector<std::int64_t> sizes;
  sizes.reserve(dims.size());
  for (const MeshDim& dim : dims) sizes.push_back(dim.size);
  return sizes;
}

std::size_t Mesh::dim_index(std::string_view name) const {
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i].name == name) return i;
  }
  std::vector<std::string_view> known;
  for (const MeshDim& dim : dims_) known.emplace_back(dim.name);
  throw ConfigError(fmt::format("unknown mesh dimension '{}'; the mesh has {}", name, fmt::join(known, ", ")));
}

DimMask Mesh::mask_of(std::span<const std::string_view> names) const {
  DimMask mask = 0;
  for (std::string_view name : names) {
    const DimMask bit = DimMask{1} << dim_index(name);
    // The rule Layout applies to a group token: a dimension named twice is an error,
    // never the same group silently.
    if ((mask & bit) != 0) {
      throw ConfigError(fmt::format("dimension '{}' appears twice in group '{}'", printable_excerpt(name),
                                    printable_excerpt(fmt::format("{}", fmt::join(names, "-")))));
    }
    mask |= bit;
  }
  return mask;
}

void Mesh::check_rank(std::int64_t rank) const { detail::check_world_rank(rank, size_); }

std::int64_t Mesh::coordinate(std::int64_t rank, std::size_t dim) const {
  check_rank(rank);
  return (rank / strides_[dim]) % dims_[dim].size;
}

std::vector<std::int64_t> Mesh::coordinates(std::int64_t rank) const {
  check_rank(rank);
  std::vector<std::int64_t> coords(dims_.size());
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    coords[i] = rank % dims_[i].size;
    rank /= dims_[i].size;
  }
  return coords;
}

std::int64_t Mesh::rank_of(std::span<const std::int64_t> coords) const {
  if (coords.size() != dims_.size()) {
    throw ConfigError(fmt::format("{} coordinates given for a mesh of {} dimensions", coords.size(), dims_.size()));
  }
  std::int64_t rank = 0;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (coords[i] < 0 || coords[i] >= dims_[i].size) {
      throw ConfigError(
          fmt::format("coordinate {} = {} is outside 0..{}", dims_[i].name, coords[i], dims_[i].size - 1));
    }
    rank += coords[i] * strides_[i];
  }
  return rank;
}

std::int64_t Mesh::group_size(DimMask varying) const noexcept {
  std::int64_t size = 1;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (varying >> i & 1U) size *= dims_[i].size;
  }
  return size;
}

std::int64_t Mesh::group_count(DimMask varying) const noexcept { return size_ / group_size(varying); }

// Both the colour and the local rank are mixed-radix numbers over a subset of the
// dimensions, fastest first: that ordering is what makes groups and members ascending.
std::int64_t Mesh::group_index(std::int64_t rank, DimMask varying) const {
  check_rank(rank);
  std::int64_t index = 0;
  std::int64_t radix = 1;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    const std::int64_t c = rank % dims_[i].size;
    rank /= dims_[i].size;
    if (!(varying >> i & 1U)) {
      index += c * radix;
      radix *= dims_[i].size;
    }
  }
  return index;
}

std::int64_t Mesh::local_rank(std::int64_t rank, DimMask varying) const { return group_index(rank, ~varying); }

std::int64_t Mesh::group_member(std::int64_t rank, DimMask varying, std::int64_t index) const {
  check_rank(rank);
  const std::int64_t count = group_size(varying);
  if (index < 0 || index >= count) {
    throw ConfigError(fmt::format("member index {} is outside a group of {} ranks", index, count));
  }
  std::int64_t member = 0;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    const std::int64_t c = rank % dims_[i].size;
    rank /= dims_[i].size;
    if (varying >> i & 1U) {
      member += (index % dims_[i].size) * strides_[i];
      index /= dims_[i].size;
    } else {
      member += c * strides_[i];
    }
  }
  return member;
}

std::int64_t Mesh::group_leader(std::int64_t group_index, DimMask varying) const {
  const std::int64_t count = group_count(varying);
  if (group_index < 0 || group_index >= count) {
    throw ConfigError(fmt::format("group index {} is outside 0..{}", group_index, count - 1));
  }
  std::int64_t leader = 0;
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (varying >> i & 1U) continue;
    leader += (group_index % dims_[i].size) * strides_[i];
    group_index /= dims_[i].size;
  }
  return leader;
}

namespace {
// Calls visit(offset) for every combination of the varying dimensions, in ascending
// offset order, with an odometer over those dimensions only.
template <typename Visit>
void for_each_offset(std::span<const MeshDim> dims, std::span<const std::int64_t> strides, DimMask varying,
                     Visit&& visit) {
  std::vector<std::size_t> axes;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (varying >> i & 1U && dims[i].size > 1) axes.push_back(i);
  }
  std::vector<std::int64_t> counter(axes.size(), 0);
  std::int64_t offset = 0;
  while (true) {
    visit(offset);
    std::size_t level = 0;
    for (; level < axes.size(); ++level) {
      const std::size_t axis = axes[level];
      if (++counter[level] < dims[axis].size) {
        offset += strides[axis];
        break;
      }
      offset -= (dims[axis].size - 1) * strides[axis];
      counter[level] = 0;
    }
    if (level == axes.size()) return;
  }
}
}  // namespace

std::vector<std::int64_t> Mesh::group_of(std::int64_t rank, DimMask varying) const {
  const std::int64_t leader = group_leader(group_index(rank, varying), varying);
  std::vector<std::int64_t> members;
  members.reserve(static_cast<std::size_t>(group_size(varying)));
  for_each_offset(dims_, strides_, varying, [&](std::int64_t offset) { members.push_back(leader + offset); });
  return members;
}

std::vector<std::vector<std::int64_t>> Mesh::groups(DimMask varying) const {
  const std::int64_t count = group_count(varying);
  const std::int64_t size = group_size(varying);
  std::vector<std::int64_t> offsets;
  offsets.reserve(static_cast<std::size_t>(size));
  for_each_offset(dims_, strides_, varying, [&](std::int64_t offset) { offsets.push_back(offset); });
  std::vector<std::vector<std::int64_t>> result;
  result.reserve(static_cast<std::size_t>(count));
  for_each_offset(dims_, strides_, ~varying, [&](std::int64_t leader) {
    std::vector<std::int64_t>& group = result.emplace_back();
    group.reserve(offsets.size());
    for (std::int64_t offset : offsets) group.push_back(leader + offset);
  });
  return result;
}

}  // namespace pgroups
