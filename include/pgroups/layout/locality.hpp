#pragma once
/// \file
/// Locality: which node each rank runs on, and for each mode of a Layout how many of its
/// groups stay inside one node and how many cross nodes. Tensor-parallel traffic that
/// leaves a node's NVLink for the network runs several times slower, so a plan should
/// say so before a job is launched. Pure: no communication.
///
/// Two ways to know the nodes:
///  - planned: nodes are consecutive blocks of G ranks (`gpus_per_node`), the placement
///    every launcher uses by default (Open MPI's --map-by slot, Slurm's block
///    distribution, torchrun's node_rank * nproc_per_node + local_rank);
///  - observed: the node of every rank of a running job, as the job saw it
///    (MPI_COMM_TYPE_SHARED, see pgroups/mpi/node.hpp), in any placement.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/layout.hpp"

namespace pgroups {

/// The node of every rank of a world.
class NodeMap {
 public:
  /// Nodes of `gpus_per_node` consecutive ranks: rank r is on node r / G, at local
  /// index r % G. Throws ConfigError naming both values when G < 1 or when the world
  /// size (>= 1) is not a multiple of G. O(1); stores nothing per rank.
  [[nodiscard]] static NodeMap blocks(std::int64_t world_size, std::int64_t gpus_per_node);

  /// Observed placement: `node_of_rank[r]` is rank r's node id, any non-negative
  /// integers (they are renumbered 0, 1, ... by first appearance). Throws ConfigError
  /// for an empty list or a negative id. O(W log W).
  [[nodiscard]] static NodeMap observed(const std::vector<std::int64_t>& node_of_rank);

  [[nodiscard]] std::int64_t world_size() const noexcept { return world_size_; }
  [[nodiscard]] std::int64_t node_count() const noexcept { return node_count_; }
  /// G for block placement; nothing for an observed one.
  [[nodiscard]] std::optional<std::int64_t> gpus_per_node() const noexcept { return gpus_per_node_; }
  /// Whether every node holds one contiguous range of ranks (always for blocks), which
  /// lets a group be judged by its first and last rank alone.
  [[nodiscard]] bool contiguous() const noexcept { return contiguous_; }

  /// Precondition for both: 0 <= rank < world_size() (ConfigError otherwise). O(1).
  [[nodiscard]] std::int64_t node_of(std::int64_t rank) const;
  /// The rank's index among the ranks of its node, by ascending global rank.
  [[nodiscard]] std::int64_t local_index(std::int64_t rank) const;
  /// Ranks on each node, by node id; O(node_count()).
  [[nodiscard]] std::vector<std::int64_t> ranks_per_node() const;

 private:
  NodeMap() = default;
  void check_rank(std::int64_t rank) const;
  std::int64_t world_size_ = 0;
  std::int64_t node_count_ = 0;
  std::optional<std::int64_t> gpus_per_node_;
  bool contiguous_ = true;
  std::vector<std::int64_t> node_;         // empty for blocks
  std::vector<std::int64_t> local_index_;  // empty for blocks
};

/// One group kind's groups, counted by node.
struct KindLocality {
  /// mode_name(mode), e.g. "tensor" or "2d_col".
  std::string name;
  std::int64_t group_size = 1;
  std::int64_t groups_within_node = 0;
  std::int64_t groups_across_nodes = 0;
  /// Whether the mode carries tensor-parallel traffic (is_bandwidth_hungry(name)).
  bool bandwidth_hungry = false;
};

/// Deprecated spelling of KindLocality (one word, kind, since 0.2.0).
using ModeLocality [[deprecated("use KindLocality")]] = KindLocality;

/// Whether a group kind of this name carries the per-layer, bandwidth-hungry traffic of
/// tensor parallelism: `tensor`, `1d`, the 2d/2.5d/3d sub-groups, `sequence`, and a mesh
/// group token with a `tp` dimension ("tp", "tp-dp", "cp-tp"). O(name length).
[[nodiscard]] bool is_bandwidth_hungry(std::string_view name) noexcept;

/// Per mode of `layout`, in creation order: its groups within one node and across nodes.
/// A group is within a node iff all its ranks are on one node. Throws ConfigError when
/// the map's world size differs from the layout's. Cost per mode: O(group count) for a
/// contiguous map (first and last member of each group), O(W) otherwise; no group is
/// materialised.
[[nodiscard]] std::vector<KindLocality> kind_locality(const Layout& layout, const NodeMap& nodes);
/// Deprecated spelling of kind_locality.
[[deprecated("use kind_locality")]] [[nodiscard]] inline std::vector<KindLocality> mode_locality(const Layout& layout,
                                                                                                 const NodeMap& nodes) {
  return kind_locality(layout, nodes);
}

/// The closed form for nodes of `gpus_per_node` consecutive ranks: kind `kind`'s groups
/// within one node and across nodes, in O(dimensions) whatever W, G and the sizes (up to
/// 2^62), when its groups are consecutive blocks of ranks (checked: a non-partial kind
/// whose first group is [0, S)). Nothing when they are not, or the world does not fill
/// whole nodes: then this form cannot judge, and the caller counts (kind_locality) or
/// says that it did not. `steps`, when given, is increased by the work done (1 here), for
/// tests of the bound.
[[nodiscard]] std::optional<KindLocality> block_locality(const Layout& layout, std::size_t kind,
                                                         std::int64_t gpus_per_node, std::int64_t* steps = nullptr);

/// One warning per bandwidth-hungry mode with a group across nodes, naming the mode, how
/// many of its groups cross, and a fix (a tensor size that divides G, valid for this
/// configuration when one exists, or a G that the tensor size divides), e.g. "tensor
/// groups cross nodes: 64 of 64 groups of 16 ranks span more than one node of 8 GPUs, so
/// tensor-parallel traffic leaves the node (NVLink) ...". For a mesh group the fix names
/// the group's own dimensions. No "warning:" prefix. Bounded work: O(modes) plus at most
/// ~200 O(1) checks for the suggested tensor size, whatever W and G; `steps`, when
/// given, is increased by each of them.
[[nodiscard]] std::vector<std::string> locality_warnings(const Layout& layout, const NodeMap& nodes,
                                                         const std::vector<KindLocality>& modes,
                                                         std::int64_t* steps = nullptr);

}  // namespace pgroups
