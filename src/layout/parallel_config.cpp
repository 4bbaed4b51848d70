#include "pgroups/layout/parallel_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "../common/did_you_mean.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/layout/rank_map.hpp"

namespace pgroups {
namespace {
std::string describe_settings(const ParallelConfig& config);
constexpr std::array<std::string_view, 6> kTensorModeNames = {"none", "1d", "2d", "2.5d", "3d", "sequence"};
}  // namespace

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
                                quoted_excerpt(text), detail::did_you_mean(text, kTensorModeNames)));
}

std::string describe(const ParallelConfig& config) {
  std::string text = describe_settings(config);
  if (!is_identity_map(config.rank_map)) text += " (rank map)";
  return text;
}

namespace {
std::string describe_settings(const ParallelConfig& config) {
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
}  // namespace

namespace {
// "tp=2,dp=4 groups=tp,tp-dp": the order, the sizes and the tokens as given, or "-".
std::string mesh_setting_text(const std::optional<MeshConfig>& mesh) {
  if (!mesh) return "-";
  std::string dims;
  for (const MeshDim& dim : mesh->dims) dims += fmt::format("{}{}={}", dims.empty() ? "" : ",", dim.name, dim.size);
  return fmt::format("{} groups={}", dims, fmt::join(mesh->groups, ","));
}
}  // namespace

std::string config_setting_text(const ParallelConfig& config) {
  return fmt::format("world_size={} pipeline={} tensor={} mode={} depth={} legacy_sequence_dp={} seed={} mesh={}",
                     config.world_size, config.pipeline, config.tensor_size, tensor_mode_name(config.tensor_mode),
                     config.depth ? std::to_string(*config.depth) : std::string("-"), config.legacy_sequence_dp,
                     config.seed, mesh_setting_text(config.mesh)) +
         (is_identity_map(config.rank_map) ? std::string()
                                           : fmt::format(" rank_map={}", fmt::join(config.rank_map, ",")));
}

std::vector<SettingField> config_setting_fields(const ParallelConfig& config) {
  std::vector<SettingField> fields = {
      {"world_size", std::to_string(config.world_size)},
      {"pipeline", std::to_string(config.pipeline)},
      {"tensor", std::to_string(config.tensor_size)},
      {"mode", std::string(tensor_mode_name(config.tensor_mode))},
      {"depth", config.depth ? std::to_string(*config.depth) : std::string("-")},
      {"legacy_sequence_dp", config.legacy_sequence_dp ? "1" : "0"},
      {"seed", std::to_string(config.seed)},
      {"mesh", config.mesh ? std::to_string(config.mesh->dims.size()) : std::string("-")},
  };
  if (config.mesh) {
    for (const MeshDim& dim : config.mesh->dims) {
      fields.emplace_back("mesh.dim", dim.name);
      fields.emplace_back("mesh.size", std::to_string(dim.size));
    }
    fields.emplace_back("mesh.groups", std::to_string(config.mesh->groups.size()));
    for (const std::string& token : config.mesh->groups) fields.emplace_back("mesh.group", token);
  }
  // Only a map that moves a rank is a setting: the identity written out is no map.
  if (!is_identity_map(config.rank_map)) {
    fields.emplace_back("rank_map", std::to_string(config.rank_map.size()));
    fields.emplace_back("rank_map.ranks", fmt::format("{}", fmt::join(config.rank_map, ",")));
  }
  return fields;
}

bool fixes_world_size(const ParallelConfig& config) noexcept { return config.mesh.has_value(); }

}  // namespace pgroups
