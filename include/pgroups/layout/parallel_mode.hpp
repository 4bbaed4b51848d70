#pragma once
/// \file
/// The 19 parallel modes of docs/reference/spec.md §3 under Colossal-AI's names, and their creation order.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pgroups/common/error.hpp"

namespace pgroups {

/// A kind of process group. The enumerators are listed in creation order, so comparing
/// two modes compares their position in that order.
enum class ParallelMode : std::uint8_t {
  global,
  data,
  model,
  pipe,
  tensor,
  tensor_1d,
  sequence,
  sequence_dp,
  tensor_2d_row,
  tensor_2d_col,
  tensor_2p5d_col,
  tensor_2p5d_row,
  tensor_2p5d_dep,
  tensor_2p5d_xz,
  tensor_3d_input,
  tensor_3d_weight,
  tensor_3d_output,
  tensor_3d_input_x_weight,
  tensor_3d_output_x_weight,
};

inline constexpr std::size_t kParallelModeCount = 19;

/// Every mode, in creation order.
inline constexpr std::array<ParallelMode, kParallelModeCount> kAllParallelModes = {
    ParallelMode::global,
    ParallelMode::data,
    ParallelMode::model,
    ParallelMode::pipe,
    ParallelMode::tensor,
    ParallelMode::tensor_1d,
    ParallelMode::sequence,
    ParallelMode::sequence_dp,
    ParallelMode::tensor_2d_row,
    ParallelMode::tensor_2d_col,
    ParallelMode::tensor_2p5d_col,
    ParallelMode::tensor_2p5d_row,
    ParallelMode::tensor_2p5d_dep,
    ParallelMode::tensor_2p5d_xz,
    ParallelMode::tensor_3d_input,
    ParallelMode::tensor_3d_weight,
    ParallelMode::tensor_3d_output,
    ParallelMode::tensor_3d_input_x_weight,
    ParallelMode::tensor_3d_output_x_weight,
};

/// Colossal-AI's name of the mode: "global", "data", "1d", "2p5d_xz", ... Throws
/// ConfigError naming the number for a value that is no enumerator (a cast from a wrong
/// integer), rather than reading past the table.
[[nodiscard]] constexpr std::string_view mode_name(ParallelMode mode) {
  constexpr std::array<std::string_view, kParallelModeCount> names = {
      "global",
      "data",
      "model",
      "pipe",
      "tensor",
      "1d",
      "sequence",
      "sequence_dp",
      "2d_row",
      "2d_col",
      "2p5d_col",
      "2p5d_row",
      "2p5d_dep",
      "2p5d_xz",
      "3d_input",
      "3d_weight",
      "3d_output",
      "3d_input_x_weight",
      "3d_output_x_weight",
  };
  const auto index = static_cast<std::size_t>(mode);
  if (index >= names.size()) {
    throw ConfigError("ParallelMode " + std::to_string(index) + " is not a parallel mode: the modes are 0 to " +
                      std::to_string(names.size() - 1));
  }
  return names[index];
}

/// The mode with that exact name, or nothing.
[[nodiscard]] constexpr std::optional<ParallelMode> mode_from_name(std::string_view name) noexcept {
  for (ParallelMode mode : kAllParallelModes) {
    if (mode_name(mode) == name) return mode;
  }
  return std::nullopt;
}

}  // namespace pgroups
