#pragma once
/// \file
/// How settings given beside a configuration file override it: the one rule shared by the
/// CLI (`--config FILE` with flags) and Python (`Plan.from_config`, `ParallelContext(config=...,
/// **overrides)`), so that the same file and the same overrides give the same plan in both.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/mesh_config.hpp"
#include "pgroups/layout/parallel_config.hpp"

namespace pgroups {

/// Settings that override a file's; each one absent leaves the file's value.
struct ConfigOverrides {
  /// A world size written by the user: below 1 it is refused (0 is only ever the library's
  /// own "not given", never a size a user means).
  std::optional<std::int64_t> world_size;
  std::optional<std::int64_t> pipeline;
  std::optional<std::int64_t> tensor;
  /// A new tensor mode also drops the file's depth unless it is 2.5d: a depth read from a
  /// 2.5d file must not outlive a switch to another mode.
  std::optional<TensorMode> mode;
  std::optional<std::int64_t> depth;
  std::optional<bool> legacy_sequence_dp;
  std::optional<std::int64_t> seed;
  std::optional<std::int64_t> gpus_per_node;
  /// Where each mesh rank runs (ParallelConfig::rank_map); replaces the file's map.
  std::optional<std::vector<std::int64_t>> rank_map;
  /// The mesh's dimensions, fastest first; they replace the file's mesh, whose group
  /// tokens stay unless `groups` is given.
  std::optional<std::vector<MeshDim>> mesh;
  /// The mesh's group tokens; they need a mesh (the file's or `mesh`).
  std::optional<std::vector<std::string>> groups;
  /// The mesh dimension whose size is what the world leaves over (Megatron-LM's
  /// data-parallel size, "dp is the rest"): once merged, when the world size is known and
  /// the mesh has that dimension, its size becomes the world size over the product of the
  /// other sizes. It travels here so that the CLI's `--order` without `--dp` and Python's
  /// Megatron drop-in resolve it by one rule.
  std::optional<std::string> rest_dimension;
};

/// `base` (a file's configuration, or the defaults) with every given override applied.
/// Throws ConfigError "world size N is invalid: it must be a positive integer" for a given
/// world size below 1, "rank_map is empty: ..." (kEmptyRankMap) for an empty rank map given
/// outright, and for groups without any mesh (neither `base`'s nor `overrides`'),
/// naming the first token and how to give one: `how_to_give_a_mesh` is the caller's own
/// spelling ("--mesh NAME=SIZE,... or --order with sizes", "mesh="); and, with a
/// `rest_dimension`, for a world size the other dimensions' product does not divide,
/// naming both. Nothing else is validated here (Layout is). O(mesh dimensions + groups).
[[nodiscard]] ParallelConfig merge_config(ParallelConfig base, const ConfigOverrides& overrides,
                                          std::string_view how_to_give_a_mesh = "its dimensions");

/// The one check that a world size was given where nothing else gives one: ConfigError
/// "world size is missing: give <how> or world_size in the config file" when `config`
/// has no world size and no mesh (a mesh's product is its world size). `how` names the
/// caller's own spelling ("--world-size W", "world_size=").
void require_world_size(const ParallelConfig& config, std::string_view how);

}  // namespace pgroups
