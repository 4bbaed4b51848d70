#include "pgroups/config/config_merge.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/rank_map.hpp"

namespace pgroups {
namespace {

// The size of `name` that makes the mesh's product `world`. A product of the others that
// overflows is left to Layout, which refuses the mesh's size itself.
void fill_rest_dimension(MeshConfig& mesh, const std::string& name, std::int64_t world) {
  std::int64_t others = 1;
  MeshDim* rest = nullptr;
  std::string order;
  for (MeshDim& dim : mesh.dims) {
    order += (order.empty() ? "" : "-") + dim.name;
    if (dim.name == name) {
      rest = &dim;
    } else if (others > 0 && __builtin_mul_overflow(others, dim.size, &others)) {
      others = -1;
    }
  }
  if (rest == nullptr || others <= 0) return;
  if (world % others != 0) {
    throw ConfigError(
        fmt::format("world size {} is not divisible by the product {} of the sizes of order {} without "
                    "{}, so no size of {} fits; give its size or other sizes",
                    world, others, order, name, name));
  }
  rest->size = world / others;
}

}  // namespace

ParallelConfig merge_config(ParallelConfig base, const ConfigOverrides& overrides,
                            std::string_view how_to_give_a_mesh) {
  if (overrides.world_size) {
    if (*overrides.world_size < 1) {
      throw ConfigError(fmt::format("world size {} is invalid: it must be a positive integer", *overrides.world_size));
    }
    base.world_size = *overrides.world_size;
  }
  if (overrides.pipeline) base.pipeline = *overrides.pipeline;
  if (overrides.tensor) base.tensor_size = *overrides.tensor;
  if (overrides.mode) {
    base.tensor_mode = *overrides.mode;
    if (base.tensor_mode != TensorMode::tensor_2p5d) base.depth.reset();
  }
  if (overrides.depth) base.depth = *overrides.depth;
  if (overrides.legacy_sequence_dp) base.legacy_sequence_dp = *overrides.legacy_sequence_dp;
  if (overrides.seed) base.seed = *overrides.seed;
  if (overrides.gpus_per_node) base.gpus_per_node = *overrides.gpus_per_node;
  if (overrides.rank_map) {
    if (overrides.rank_map->empty()) throw ConfigError(fmt::format("rank_map {}", kEmptyRankMap));
    base.rank_map = *overrides.rank_map;
  }
  if (overrides.mesh) {
    std::vector<std::string> groups = base.mesh ? std::move(base.mesh->groups) : std::vector<std::string>{};
    base.mesh = MeshConfig{*overrides.mesh, std::move(groups)};
  }
  if (overrides.groups && !overrides.groups->empty()) {
    if (!base.mesh) {
      throw ConfigError(
          fmt::format("group '{}' needs a mesh: groups are the group kinds of a mesh (give {}, or a "
                      "[mesh] table in the config file); presets have fixed modes",
                      overrides.groups->front(), how_to_give_a_mesh));
    }
    base.mesh->groups = *overrides.groups;
  }
  if (overrides.rest_dimension && base.mesh && base.world_size > 0) {
    fill_rest_dimension(*base.mesh, *overrides.rest_dimension, base.world_size);
  }
  return base;
}

void require_world_size(const ParallelConfig& config, std::string_view how) {
  if (config.world_size == 0 && !config.mesh) {
    throw ConfigError(fmt::format("world size is missing: give {} or world_size in the config file", how));
  }
}

}  // namespace pgroups
