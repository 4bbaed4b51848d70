#pragma once
/// \file
/// ParallelConfig: what the user asks for (docs/reference/spec.md §1), as a plain value. It is not
/// validated here; Layout's constructor (layout.hpp) is the single place that checks it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/agreement_record.hpp"
#include "pgroups/layout/mesh_config.hpp"

namespace pgroups {

/// How the tensor-parallel ranks are arranged (Colossal-AI's `tensor.mode`).
enum class TensorMode : std::uint8_t { none, tensor_1d, tensor_2d, tensor_2p5d, tensor_3d, sequence };

/// "none", "1d", "2d", "2.5d", "3d" or "sequence"; ConfigError naming the number for a
/// value that is no enumerator.
[[nodiscard]] std::string_view tensor_mode_name(TensorMode mode);

/// Parses a tensor mode as written in a config: the exact, case-sensitive names of
/// tensor_mode_name(), plus "None"/"null" for none (Colossal-AI writes `mode=None`).
/// Throws ConfigError naming the value (escaped and cut as quoted_excerpt does: 'abc'...),
/// the allowed names and the closest one.
[[nodiscard]] TensorMode parse_tensor_mode(std::string_view text);

/// The parallel layout one job asks for. Sizes are signed so that a negative value read
/// from a file survives to validation and is reported, not wrapped.
struct ParallelConfig {
  /// Total number of ranks W; 0 means "not given" (taken from the communicator).
  std::int64_t world_size = 0;
  /// GPUs (ranks) per node, G, for the locality report of a plan (pgroups/layout/locality.hpp):
  /// nodes are consecutive blocks of G ranks. Not part of the layout: groups are the same
  /// with or without it, and a running job reports the nodes it really has.
  std::optional<std::int64_t> gpus_per_node;
  std::int64_t pipeline = 1;
  std::int64_t tensor_size = 1;
  TensorMode tensor_mode = TensorMode::none;
  /// 2.5D depth; required with mode 2.5d, forbidden with every other mode.
  std::optional<std::int64_t> depth;
  /// Reproduce Colossal-AI's contiguous `sequence_dp` blocks instead of the documented
  /// "same pipeline stage" groups (docs/reference/spec.md §3).
  bool legacy_sequence_dp = false;
  /// Base of the per-mode random seeds (docs/reference/spec.md §6).
  std::int64_t seed = 1024;
  /// A named mesh and its group kinds instead of the presets. With a mesh, pipeline,
  /// tensor_size, tensor_mode, depth and legacy_sequence_dp must keep their defaults
  /// (ConfigError naming what was mixed); world_size, when given, must equal the
  /// product of the mesh's sizes (ConfigError naming both).
  std::optional<MeshConfig> mesh;
  /// Where each mesh rank runs (pgroups/layout/rank_map.hpp): entry r is the launcher rank
  /// that runs mesh rank r. Empty (or the identity) when mesh rank r runs on launcher rank r.
  /// Layout checks it: a permutation of the world, keeping each one-dimension kind's order.
  std::vector<std::int64_t> rank_map;

  friend bool operator==(const ParallelConfig&, const ParallelConfig&) = default;
};

/// One-line human description, e.g. "W=16 pipeline=2 tensor=8 mode=2.5d depth=2", or for a
/// mesh "W=16 mesh tp=2,dp=4,pp=2 groups tp,dp,pp,tp-dp".
[[nodiscard]] std::string describe(const ParallelConfig& config);

/// The configuration's part of the text ranks agree on before they build groups
/// (agreement_text in pgroups/context/parallel_context.hpp), every field spelled out:
/// "world_size=8 pipeline=2 tensor=4 mode=2d depth=- legacy_sequence_dp=false seed=1024
/// mesh=-", or with a mesh "... mesh=tp=2,dp=2,pp=2 groups=tp,tp-dp" (order, sizes and
/// group tokens as given). ConfigError for a tensor mode that is no enumerator. O(size).
[[nodiscard]] std::string config_setting_text(const ParallelConfig& config);

/// The settings of config_setting_text as fields of an agreement record
/// (pgroups/layout/agreement_record.hpp), in the same order, the mesh's dimensions and group tokens
/// one field each, so that no two configurations encode the same. O(size).
[[nodiscard]] std::vector<SettingField> config_setting_fields(const ParallelConfig& config);

/// Whether the configuration fixes its own world size (a mesh: the product of its sizes)
/// instead of leaving it free, the data-parallel size growing with it (the presets).
[[nodiscard]] bool fixes_world_size(const ParallelConfig& config) noexcept;

}  // namespace pgroups
