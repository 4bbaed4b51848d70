#include "pgroups/config/config_json.hpp"

#include <string>
#include <utility>

namespace pgroups {

namespace {
nlohmann::json settings_json(const ParallelConfig& config);
}

nlohmann::json config_json(const ParallelConfig& config) {
  nlohmann::json json = settings_json(config);
  // Only a map that moves a rank is shown: the JSON of a plan without one is unchanged.
  if (!config.rank_map.empty() && !is_identity_map(config.rank_map)) json["rank_map"] = config.rank_map;
  return json;
}

namespace {
nlohmann::json settings_json(const ParallelConfig& config) {
  if (config.mesh) {
    nlohmann::json sizes = nlohmann::json::object();
    for (const MeshDim& dim : config.mesh->dims) sizes[dim.name] = dim.size;
    return {{"world_size", config.world_size},
            {"mesh", {{"order", mesh_order(*config.mesh)}, {"sizes", std::move(sizes)}}},
            {"groups", config.mesh->groups}};
  }
  nlohmann::json tensor = {{"size", config.tensor_size}};
  tensor["mode"] = config.tensor_mode == TensorMode::none
                       ? nlohmann::json(nullptr)
                       : nlohmann::json(std::string(tensor_mode_name(config.tensor_mode)));
  if (config.tensor_mode == TensorMode::tensor_2p5d && config.depth) tensor["depth"] = *config.depth;
  nlohmann::json json = {{"world_size", config.world_size}, {"pipeline", config.pipeline}, {"tensor", tensor}};
  if (config.legacy_sequence_dp) json["legacy_sequence_dp"] = true;
  return json;
}
}  // namespace

nlohmann::json config_json(const Layout& layout) {
  nlohmann::json json = config_json(layout.config());
  if (layout.config().mesh) {
    json["groups"] = nlohmann::json::array();
    for (const GroupKind& kind : layout.group_kinds()) json["groups"].push_back(kind.name);
  }
  return json;
}

}  // namespace pgroups
