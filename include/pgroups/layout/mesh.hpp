#pragma once
/// \file
/// Mesh: a mixed-radix arrangement of ranks over named dimensions, the mathematics under
/// every layout. The first dimension varies fastest (stride 1); each later one's stride
/// is the product of the sizes before it. A "group" is the set of ranks that agree with
/// a rank on every dimension outside a chosen set of varying dimensions.
///
/// Nothing is enumerated unless asked for: a rank's coordinates, its group's size,
/// colour and local rank cost O(number of dimensions); its group costs O(group size).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pgroups {

/// One named dimension of a Mesh.
struct MeshDim {
  std::string name;
  std::int64_t size = 1;
  friend bool operator==(const MeshDim&, const MeshDim&) = default;
};

/// A set of dimensions of one Mesh, as a bit per dimension index.
using DimMask = std::uint32_t;

class Mesh {
 public:
  static constexpr std::size_t kMaxDims = 32;

  /// Dimensions fastest first. Throws ConfigError for an empty or duplicate name, a size
  /// below 1, more than kMaxDims dimensions, or a product beyond INT64_MAX.
  explicit Mesh(std::vector<MeshDim> dims);

  [[nodiscard]] std::int64_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<const MeshDim> dims() const noexcept { return dims_; }
  [[nodiscard]] std::int64_t stride(std::size_t dim) const noexcept { return strides_[dim]; }

  /// Index of the dimension called `name`; throws ConfigError naming it and the known
  /// dimensions when there is none.
  [[nodiscard]] std::size_t dim_index(std::string_view name) const;
  /// The mask of the named dimensions; throws like dim_index.
  [[nodiscard]] DimMask mask_of(std::span<const std::string_view> names) const;
  [[nodiscard]] DimMask mask_of(std::initializer_list<std::string_view> names) const {
    return mask_of(std::span<const std::string_view>(names.begin(), names.size()));
  }

  /// Precondition for every rank argument below: 0 <= rank < size(); the functions
  /// throw ConfigError otherwise.
  [[nodiscard]] std::int64_t coordinate(std::int64_t rank, std::size_t dim) const;
  [[nodiscard]] std::vector<std::int64_t> coordinates(std::int64_t rank) const;
  /// Inverse of coordinates(); throws ConfigError for a coordinate out of range.
  [[nodiscard]] std::int64_t rank_of(std::span<const std::int64_t> coords) const;

  /// Number of ranks in each group varying `varying` (product of their sizes).
  [[nodiscard]] std::int64_t group_size(DimMask varying) const noexcept;
  /// Number of groups varying `varying`; size() / group_size(varying).
  [[nodiscard]] std::int64_t group_count(DimMask varying) const noexcept;
  /// Position of the rank's group among all groups ordered by their first (smallest)
  /// rank; usable as the colour of MPI_Comm_split.
  [[nodiscard]] std::int64_t group_index(std::int64_t rank, DimMask varying) const;
  /// Position of the rank inside its ascending group.
  [[nodiscard]] std::int64_t local_rank(std::int64_t rank, DimMask varying) const;
  /// The member at position `index` of the rank's ascending group, in O(dimensions).
  [[nodiscard]] std::int64_t group_member(std::int64_t rank, DimMask varying, std::int64_t index) const;
  /// The first rank of group number `group_index`.
  [[nodiscard]] std::int64_t group_leader(std::int64_t group_index, DimMask varying) const;
  /// The rank's whole group, ascending, in O(group size).
  [[nodiscard]] std::vector<std::int64_t> group_of(std::int64_t rank, DimMask varying) const;
  /// Every group, ascending by first rank, each ascending; O(size()).
  [[nodiscard]] std::vector<std::vector<std::int64_t>> groups(DimMask varying) const;

 private:
  void check_rank(std::int64_t rank) const;
  static std::vector<std::int64_t> sizes_of(std::span<const MeshDim> dims);
  std::vector<MeshDim> dims_;
  std::vector<std::int64_t> strides_;
  std::int64_t size_ = 1;
};

}  // namespace pgroups
