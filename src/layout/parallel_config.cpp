#include "pgroups/parallel_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "../common/did_you_mean.hpp"
#include "../common/printable.hpp"
#include "pgroups/error.hpp"

namespace pgroups {
namespace {
constexpr std::array<std::string_view, 6> kTensorModeNames = {"none", "1d", "2d", "2.5d", "3d", "sequence"};
}

std::string_view tensor_mode_name(TensorMode mode) {
  const auto index = static_cast<std::size_t>(mode);
  if (index >= kTensorModeNames.size()) {
    throw ConfigError(fmt::format("TensorMode {} is not a tensor mode: the modes are 0 to {} ({})", index,
                                  kTensorModeNames.size() - 1, fmt::join(kTensorModeNames, ", ")));
  }
  return kTensorModeNames[index];
}

TensorMode parse_tensor_mode(std::string_view text) {
  if (text == "None" || text == "null") return TensorMode::none;
  for (std::size_t i = 0; i < kTensorModeNames.size(); ++i) {
    if (kTensorModeNames[i] == text) return static_cast<TensorMode>(i);
  }
  throw ConfigError(fmt::format("unknown tensor mode {}; the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence{}",
                                detail::quoted_excerpt(text), detail::did_you_mean(text, kTensorModeNames)));
}

std::string describe(const ParallelConfig& config) {
  std::string text = config.world_size > 0 ? fmt::format("W={} ", config.world_size) : std::string();
  if (config.mesh) {
    // The other fields are reported too when set, so that a mixed configuration (an
    // error) still describes itself faithfully.
    text += describe(*config.mesh);
    if (config.pipeline != 1 || config.tensor_size != 1 || config.tensor_mode != TensorMode::none || config.depth) {
      text += " ";
    } else {
      return text;
    }
  }
  text += fmt::format("pipeline={} tensor={} mode={}", config.pipeline, config.tensor_size,
                      tensor_mode_name(config.tensor_mode));
  if (config.depth) text += fmt::format(" depth={}", *config.depth);
  if (config.legacy_sequence_dp) text += " legacy_sequence_dp";
  return text;
}

bool fixes_world_size(const ParallelConfig& config) noexcept { return config.mesh.has_value(); }

}  // namespace pgroups
