#pragma once
/// \file
/// Recovery: the layout a job's survivors run after it lost ranks, or after new ranks
/// joined it. Pure layout math, computed without enumerating the world.
///
/// Every dimension but one keeps its size. The shrinking dimension (a mesh's `dp` unless
/// another is named; a preset's `data`) loses whole replicas, a replica being the ranks
/// that share one coordinate of it. A replica that lost a rank is dropped and its healthy
/// ranks become spares; every surviving replica keeps its ranks, so its processes, nodes
/// and weights stay where they are. Joining ranks (ids at or past the old world size, as a
/// launcher numbers new processes) fill whole new replicas appended to the dimension;
/// joiners left over are spares.
///
/// Old ranks are launcher ranks: under a placed layout (ParallelConfig::rank_map) the lost
/// and alive ranks a launcher reports are mapped through the old rank map to the mesh ranks
/// whose replicas they drop, and every old rank this class takes or returns is a launcher
/// rank. The new layout has no rank map of its own: its ranks are the new mesh ranks, as a
/// launcher that renumbers the survivors gives them, so a second recovery's old ranks are
/// the first one's new ranks.
///
/// The rank map says which old (launcher) rank runs each new rank: entry r of rank_map()
/// is the old rank of new rank r, the old layout's map composed with the renumbering. A new
/// group of a kind that does not vary the shrinking dimension, mapped through it, is
/// exactly an old group (members in the same order where the old layout has no rank map,
/// for the map is then monotone over the surviving replicas); a kind that varies it keeps
/// the old group's surviving members (and gains the joiners of new replicas).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_config.hpp"

namespace pgroups {

/// What happened to a job: the ranks it lost and the ranks that join it.
struct RecoveryRequest {
  /// Old ranks whose processes are gone, each in [0, W), no duplicates, any order.
  std::vector<std::int64_t> lost;
  /// New processes, each named by an id at or past W (a launcher gives them W, W+1, ...),
  /// no duplicates, any order.
  std::vector<std::int64_t> joining;
  /// The shrinking dimension: a mesh dimension's name, or for a preset `data` (also `dp`),
  /// `pipe` (`pp`) or, in modes none, 1d and sequence, `tensor` (`tp`). Empty: `dp` for a
  /// mesh, `data` for a preset.
  std::string shrink;
};

/// The most ranks a list of lost or alive ranks may name or imply.
inline constexpr std::int64_t kMaxListedRanks = std::int64_t{1} << 22;

/// The request given by the ranks that are alive: old ranks of [0, W) missing from
/// `alive` are lost, ids at or past W join. ConfigError for a negative id, a duplicate,
/// naming it, or more than kMaxListedRanks lost. O(|alive| log |alive| + |lost|).
[[nodiscard]] RecoveryRequest recovery_request_from_alive(std::int64_t world_size, std::span<const std::int64_t> alive,
                                                          std::string shrink = {});

/// What an old rank (or a joining id) does after the recovery.
enum class RankFate : std::uint8_t { active, spare, lost };

/// "active", "spare" or "lost".
[[nodiscard]] std::string_view rank_fate_name(RankFate fate);

class Recovery {
 public:
  /// Computes the recovery of `old_layout`. Throws ConfigError naming the value and the
  /// rule for a lost rank outside [0, W), a joining id below W, a negative id, a
  /// duplicate (within or across the lists), a shrinking dimension the layout does not
  /// have (naming the ones it has), the tensor of a 2d/2.5d/3d preset (no single
  /// dimension), and, when no replica survives and no new one is filled, naming the
  /// replicas and the lost rank that dropped each (the first few of a long list).
  /// O((|lost| + |joining|) * (dimensions + log)), whatever the world size.
  Recovery(const Layout& old_layout, RecoveryRequest request);

  [[nodiscard]] const Layout& old_layout() const noexcept { return old_; }
  /// The layout the survivors run: the old configuration with the shrinking dimension's
  /// new size (for a preset the world size, pipeline or tensor size it implies), and no
  /// gpus_per_node: the survivors stay on their old nodes, no consecutive blocks of new ranks.
  [[nodiscard]] const Layout& layout() const noexcept { return new_; }
  /// The shrinking dimension's name in the layouts' mesh (`data` for a preset's `dp`).
  [[nodiscard]] const std::string& shrink_dim() const noexcept { return shrink_name_; }
  /// The number of ranks of one replica: W / size of the shrinking dimension.
  [[nodiscard]] std::int64_t replica_size() const noexcept { return replica_size_; }
  /// The shrinking dimension's coordinates of the dropped replicas, ascending.
  [[nodiscard]] std::span<const std::int64_t> dropped_replicas() const noexcept { return dropped_; }
  /// The number of replicas appended, filled by joining ranks.
  [[nodiscard]] std::int64_t added_replicas() const noexcept { return added_; }
  /// The lost ranks, ascending.
  [[nodiscard]] std::span<const std::int64_t> lost() const noexcept { return lost_; }
  /// The joining ids, ascending; the first added_replicas() * replica_size() run new
  /// ranks, the rest are spares.
  [[nodiscard]] std::span<const std::int64_t> joining() const noexcept { return joining_; }
  /// The number of spares: healthy ranks of dropped replicas plus leftover joiners. O(1).
  [[nodiscard]] std::int64_t spare_count() const noexcept;
  /// Every spare, ascending. O(spare_count() + |lost|): bound it before calling at scale.
  [[nodiscard]] std::vector<std::int64_t> spares() const;
  /// The old rank at `index` (in mesh order) of the dropped replica whose coordinate is
  /// `coordinate`. O(dimensions). ConfigError for a coordinate or index out of range.
  [[nodiscard]] std::int64_t replica_member(std::int64_t coordinate, std::int64_t index) const;
  /// The shrinking dimension's coordinate of `old_rank`: the replica it belongs to.
  /// O(dimensions). ConfigError for a rank outside the old world.
  [[nodiscard]] std::int64_t replica_of(std::int64_t old_rank) const;

  /// The surviving old ranks whose new rank differs from their old one (their shrinking
  /// coordinate or the stride of a slower dimension changed, or, under an old rank map,
  /// their launcher rank is not their new mesh rank), counted entry by entry, joiners that
  /// grow the dimension included. O(|lost|) without an old rank map; O(new W * dimensions)
  /// with one (the map itself holds W entries).
  [[nodiscard]] std::int64_t renumbered_count() const;

  /// The old rank (or joining id) that runs `new_rank`. ConfigError for a rank outside
  /// the new world. O(dimensions + log |lost|).
  [[nodiscard]] std::int64_t old_rank(std::int64_t new_rank) const;
  /// The new rank that `old_rank` (or a joining id) runs, or nothing for a spare or a lost
  /// rank. ConfigError for an id that is neither an old rank nor a joining id.
  /// O(dimensions + log(|lost| + |joining|)).
  [[nodiscard]] std::optional<std::int64_t> new_rank(std::int64_t old_rank) const;
  /// What `old_rank` (or a joining id) does; ConfigError like new_rank.
  [[nodiscard]] RankFate fate(std::int64_t old_rank) const;
  /// Every entry of the rank map: element r is old_rank(r). O(new W * dimensions): bound
  /// the new world before calling at scale.
  [[nodiscard]] std::vector<std::int64_t> rank_map() const;

 private:
  [[nodiscard]] bool is_dropped(std::int64_t coordinate) const;

  struct Parts;
  [[nodiscard]] static Parts compute_parts(const Layout& old_layout, RecoveryRequest request);
  Recovery(const Layout& old_layout, Parts parts);

  Layout old_;
  std::size_t shrink_ = 0;
  std::string shrink_name_;
  std::int64_t replica_size_ = 1;
  std::int64_t surviving_ = 0;
  std::int64_t added_ = 0;
  std::vector<std::int64_t> lost_;
  std::vector<std::int64_t> joining_;
  std::vector<std::int64_t> dropped_;
  /// dropped_[j] - j, nondecreasing: how many dropped coordinates come before the c-th
  /// surviving one is a binary search in it.
  std::vector<std::int64_t> dropped_shifted_;
  Layout new_;
};

/// A layout fitted to another world after an elastic restart (torchrun's --nnodes MIN:MAX
/// restarting with more or fewer ranks, which it numbers itself): the same shape, with
/// the shrinking dimension given as many whole replicas as the new world holds.
struct Resize {
  Layout layout;                  ///< world size = replicas x replica_size
  std::string shrink_dim;         ///< the shrinking dimension's name in the mesh
  std::int64_t replica_size = 1;  ///< ranks of one replica: the product of the other dimensions
  std::int64_t replicas = 1;      ///< the shrinking dimension's new size, more or fewer than before
  std::int64_t spares = 0;        ///< ranks [layout's world size, world): the highest, running nothing
  /// Whether the shrinking dimension splits the data (is_data_dim): then the batch rule
  /// applies; otherwise it splits the model, whose weights are re-sharded instead.
  bool splits_data = true;
};

/// Whether a dimension named `name` splits the data, each of its replicas reading its own
/// shard of every batch: a preset's `data`, and the mesh names for data parallelism that
/// Megatron, torchtitan and FSDP use (`dp`, `dp_replicate`, `dp_shard` and any `dp_*`,
/// `ddp`, `fsdp`, `hsdp`). Every other dimension (tp, pp, cp, ep, ...) splits the model or
/// the sequence, so a resize of it leaves the batch alone.
[[nodiscard]] bool is_data_dim(std::string_view name) noexcept;

/// `layout` resized to a world of `world` ranks: the shrinking dimension (a mesh's `dp`
/// unless `shrink` names another; a preset's `data`) gets world / replica_size replicas,
/// the highest world % replica_size ranks are spares. An old rank map does not carry over
/// (the restarted world is numbered by its launcher), nor does gpus_per_node when the
/// world is not a whole number of its nodes. The data rule a user needs: with the global
/// batch kept per replica, the global batch scales with `replicas`; to keep it, scale the
/// per-replica batch by old replicas / new (docs/using/recovery.md), where the dimension
/// splits the data (Resize::splits_data). ConfigError naming
/// both sizes when `world` holds no whole replica, naming the value for a world below 1,
/// and Recovery's for a shrinking dimension the layout lacks. O(dimensions).
[[nodiscard]] Resize resized(const Layout& layout, std::int64_t world, std::string_view shrink = {});

/// The most nodes what_if_node_loss answers for (each in O(dimensions) without a rank map).
inline constexpr std::int64_t kMaxWhatIfNodes = std::int64_t{1} << 22;

/// The single-node losses that end alike: the nodes whose loss drops the same number of
/// replicas of the shrinking dimension, so that the survivors have one shape.
struct NodeLossClass {
  /// Replicas of the shrinking dimension the loss of one such node drops.
  std::int64_t dropped = 0;
  /// How many nodes' loss falls in the class, and the first of them (nodes are numbered
  /// by launcher rank: node n holds launcher ranks [n G, (n + 1) G)).
  std::int64_t nodes = 0;
  std::int64_t first_node = 0;
  /// The shrinking dimension's size after the loss; 0 when no replica survives.
  std::int64_t new_size = 0;
  /// The healthy ranks of the dropped replicas: dropped × replica size − G.
  std::int64_t spares = 0;
  /// The fewest and most surviving ranks renumbered (Recovery::renumbered_count) over the
  /// class's nodes; -1 for both where they were not counted (a placed layout whose count
  /// would cost more than kMaxWhatIfRenumberedWork steps).
  std::int64_t renumbered_min = 0;
  std::int64_t renumbered_max = 0;
};

/// The work what_if_node_loss spends on counting renumbered ranks under a rank map
/// (nodes × world size).
inline constexpr std::int64_t kMaxWhatIfRenumberedWork = std::int64_t{1} << 26;

/// What the loss of any one node would leave, before it happens: every class of outcome,
/// by the number of replicas dropped, ascending.
struct NodeLossWhatIf {
  std::string shrink_dim;
  std::int64_t old_size = 0;
  std::int64_t replica_size = 0;
  std::int64_t gpus_per_node = 0;
  std::int64_t node_count = 0;
  std::vector<NodeLossClass> classes;
};

/// The recovery of the loss of each node of `gpus_per_node` GPUs, as Recovery would compute
/// it (lost: the node's launcher ranks), grouped by outcome. `shrink` as in RecoveryRequest.
/// ConfigError for a gpus_per_node below 1, above kMaxListedRanks or not dividing the
/// world, more than kMaxWhatIfNodes nodes, and as Recovery for `shrink`. O(nodes × dimensions) without a
/// rank map (no rank is enumerated); O(world size × dimensions) with one, plus the
/// renumbered counts within kMaxWhatIfRenumberedWork.
[[nodiscard]] NodeLossWhatIf what_if_node_loss(const Layout& layout, std::int64_t gpus_per_node,
                                               std::string shrink = {});

/// The request of the loss of node `node` of `gpus_per_node` GPUs: its launcher ranks lost.
[[nodiscard]] RecoveryRequest node_loss_request(std::int64_t node, std::int64_t gpus_per_node, std::string shrink = {});

}  // namespace pgroups
