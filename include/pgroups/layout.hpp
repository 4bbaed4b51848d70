#pragma once
/// \file
/// Layout: the validated plan of one configuration, i.e. which modes exist and, for any
/// rank, its coordinates and its group in each mode (docs/spec.md §2 and §3). Pure: no
/// communication, no enumeration of the world unless a caller asks for all groups.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pgroups/mesh.hpp"
#include "pgroups/parallel_config.hpp"
#include "pgroups/parallel_mode.hpp"

namespace pgroups {

/// One named coordinate of a rank, e.g. {"pipe", 1} or {"row", 0}.
struct Coordinate {
  std::string name;
  std::int64_t value = 0;
  std::int64_t size = 1;
};

class Layout {
 public:
  /// Validates `config` completely (docs/spec.md §1 and §5) and throws ConfigError naming the
  /// offending values and the rule; world_size must be given (> 0).
  explicit Layout(const ParallelConfig& config);

  [[nodiscard]] const ParallelConfig& config() const noexcept { return config_; }
  [[nodiscard]] std::int64_t world_size() const noexcept { return config_.world_size; }
  [[nodiscard]] std::int64_t pipeline_size() const noexcept { return config_.pipeline; }
  [[nodiscard]] std::int64_t tensor_size() const noexcept { return config_.tensor_size; }
  [[nodiscard]] std::int64_t data_parallel_size() const noexcept { return data_parallel_size_; }
  /// The side of the tensor grid: q for 2d and 2.5d, d for 3d, 0 otherwise.
  [[nodiscard]] std::int64_t tensor_grid_dim() const noexcept { return grid_dim_; }

  /// The modes this configuration creates, in creation order (`global` first).
  [[nodiscard]] std::span<const ParallelMode> modes() const noexcept { return modes_; }
  [[nodiscard]] bool has_mode(ParallelMode mode) const noexcept;

  /// The rank's coordinates, slowest first: data, pipe, then the tensor ones
  /// (tensor, or its 2d/2.5d/3d sub-coordinates). Throws ConfigError for a bad rank.
  [[nodiscard]] std::vector<Coordinate> coordinates(std::int64_t rank) const;

  /// Every function below throws StateError for a mode not in modes() and ConfigError
  /// for a rank outside [0, world_size). Each is O(number of coordinates) except
  /// group_of, O(group size), and groups, O(world size).
  [[nodiscard]] std::int64_t group_size(ParallelMode mode) const;
  [[nodiscard]] std::int64_t group_count(ParallelMode mode) const;
  [[nodiscard]] std::int64_t local_rank(std::int64_t rank, ParallelMode mode) const;
  /// The rank's group's position among the mode's groups ordered by first rank.
  [[nodiscard]] std::int64_t group_index(std::int64_t rank, ParallelMode mode) const;
  /// The first (smallest) rank of the mode's group number `group_index`.
  [[nodiscard]] std::int64_t group_leader(ParallelMode mode, std::int64_t group_index) const;
  /// The global rank at position `index` of the rank's group.
  [[nodiscard]] std::int64_t group_member(std::int64_t rank, ParallelMode mode, std::int64_t index) const;
  [[nodiscard]] std::vector<std::int64_t> group_of(std::int64_t rank, ParallelMode mode) const;
  [[nodiscard]] std::vector<std::vector<std::int64_t>> groups(ParallelMode mode) const;

  /// Per-mode random seed of docs/spec.md §6, as Colossal-AI seeds its generators: `tensor` gets
  /// `seed + tensor_local_rank + 1024 * pipeline_stage`, every other mode the base seed.
  [[nodiscard]] std::int64_t seed(std::int64_t rank, ParallelMode mode) const;

 private:
  struct ModeShape {
    bool on_legacy_block_mesh = false;
    DimMask varying = 0;
  };
  [[nodiscard]] const ModeShape& shape(ParallelMode mode) const;
  [[nodiscard]] const Mesh& mesh_of(const ModeShape& shape) const noexcept {
    return shape.on_legacy_block_mesh ? legacy_block_mesh_ : mesh_;
  }
  void check_rank(std::int64_t rank) const;

  ParallelConfig config_;
  std::int64_t data_parallel_size_ = 1;
  std::int64_t grid_dim_ = 0;
  Mesh mesh_;
  /// Colossal-AI's contiguous sequence_dp blocks are no set of coordinates of mesh_;
  /// they are the "block member" dimension of this reshaping of the same ranks.
  Mesh legacy_block_mesh_;
  std::vector<ParallelMode> modes_;
  std::array<ModeShape, kParallelModeCount> shapes_{};
};

/// Checks a configuration without building the mesh; throws like Layout's constructor.
void validate(const ParallelConfig& config);

}  // namespace pgroups
