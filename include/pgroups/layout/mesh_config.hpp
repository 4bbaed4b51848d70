#pragma once
/// \file
/// MeshConfig: a job described as a named device mesh plus the group kinds to build on it
/// (Megatron-LM's `order` and sizes, PyTorch's DeviceMesh dimension names). A plain value;
/// Layout's constructor (layout.hpp) is the single place that validates it.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/mesh.hpp"

namespace pgroups {

/// The two predefined group tokens of Megatron-LM, available when the mesh has a `pp`
/// dimension: `embd` = the first and last rank of every pp group (one rank when pp=1),
/// `pos_embd` = the first rank of every pp group. Other ranks are in no such group.
inline constexpr std::string_view kEmbeddingGroup = "embd";
inline constexpr std::string_view kPositionEmbeddingGroup = "pos_embd";

struct MeshConfig {
  /// The dimensions in rank order, fastest first (stride 1), e.g. tp, cp, dp, pp.
  std::vector<MeshDim> dims;
  /// The group kinds to build, in creation order, each a token as the user wrote it:
  /// dash-separated dimension names ("tp-dp"; their order inside the token does not
  /// matter) or a predefined token (kEmbeddingGroup, kPositionEmbeddingGroup). Empty
  /// means one kind per dimension, in mesh order.
  std::vector<std::string> groups;

  friend bool operator==(const MeshConfig&, const MeshConfig&) = default;
};

/// The dimension names joined by '-', fastest first: Megatron's `order`, "tp-cp-dp-pp".
[[nodiscard]] std::string mesh_order(const MeshConfig& mesh);

/// "tp=2,cp=2,dp=4,pp=2 groups tp,tp-dp": order, sizes and groups in one line.
[[nodiscard]] std::string describe(const MeshConfig& mesh);

/// Parses the CLI spelling "tp=2,cp=2,dp=4,pp=2" (fastest first). Throws ConfigError
/// naming the offending item for an item without '=', an empty name, or a size that is
/// not a decimal integer; names and sizes themselves are checked by Layout.
[[nodiscard]] std::vector<MeshDim> parse_mesh_dims(std::string_view spec);

/// Megatron's spelling: `order` = dash-separated names, fastest first ("tp-cp-ep-dp-pp"),
/// and `sizes` by name. A name of the order without a size gets size 1; a size for a name
/// missing from the order must be 1 (as Megatron requires), else ConfigError naming both.
[[nodiscard]] std::vector<MeshDim> mesh_dims_from_order(std::string_view order, std::span<const MeshDim> sizes);

/// Splits a group token at '-': "tp-dp" -> {"tp", "dp"}. No validation.
[[nodiscard]] std::vector<std::string_view> split_group_token(std::string_view token);

}  // namespace pgroups
