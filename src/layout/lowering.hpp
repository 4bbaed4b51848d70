#pragma once
// Helpers shared by the lowerings of the two notations (preset_lowering.cpp,
// mesh_lowering.cpp) and Layout's queries (layout.cpp). Internal to pgroups_layout.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "pgroups/common/printable.hpp"
#include "pgroups/layout/mesh.hpp"
#include "pgroups/layout/parallel_config.hpp"

namespace pgroups::detail {

/// The sizes a preset implies beyond what it states.
struct PresetSizes {
  std::int64_t data_parallel_size = 1;
  /// q for 2d and 2.5d, the cube's side for 3d, 0 otherwise.
  std::int64_t grid_dim = 0;
};

/// Checks a preset configuration (docs/reference/spec.md §1 and §5) and derives its sizes; throws
/// ConfigError naming the values and the rule. A mesh configuration gives {} unchecked:
/// its rules are applied where it is lowered.
[[nodiscard]] PresetSizes check_preset(const ParallelConfig& config);

/// The index of the dimension called `name`, if the mesh has one. O(dimensions).
[[nodiscard]] inline std::optional<std::size_t> find_dim(const Mesh& mesh, std::string_view name) {
  for (std::size_t i = 0; i < mesh.dims().size(); ++i) {
    if (mesh.dims()[i].name == name) return i;
  }
  return std::nullopt;
}

/// " (did you mean X?)" for a short name (a dimension, a kind): one edit or a swap of
/// neighbours counts as a typo when it points at one name; "" when nothing is close.
[[nodiscard]] std::string suggest_dim(std::string_view word, std::span<const std::string_view> names);

/// User text quoted in a layout message: the common escaping (printable.hpp), cut at 64
/// bytes.
[[nodiscard]] inline std::string printable(std::string_view text) { return printable_excerpt(text, 64); }

}  // namespace pgroups::detail
