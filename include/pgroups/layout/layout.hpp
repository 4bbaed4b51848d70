#pragma once
/// \file
/// Layout: the validated plan of one configuration, i.e. which group kinds exist and, for
/// any rank, its coordinates and its group in each kind (docs/reference/spec.md §2 and §3). Pure: no
/// communication, no enumeration of the world unless a caller asks for all groups.
///
/// A group kind is a named way to cut the world into groups. A preset configuration
/// (pipeline, tensor, mode) yields the ParallelMode kinds, named by mode_name() ("global",
/// "data", "2d_row", ...); a mesh configuration (ParallelConfig::mesh) yields one kind
/// per group token, named by the token exactly as given ("tp-dp"), whose groups are the
/// mesh's ranks that vary only the token's dimensions.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pgroups/layout/mesh.hpp"
#include "pgroups/layout/mesh_config.hpp"
#include "pgroups/layout/parallel_config.hpp"
#include "pgroups/layout/parallel_mode.hpp"
#include "pgroups/layout/partition_key.hpp"
#include "pgroups/layout/rank_map.hpp"

namespace pgroups {

/// One named coordinate of a rank, e.g. {"pipe", 1} or {"row", 0}.
struct Coordinate {
  std::string name;
  std::int64_t value = 0;
  std::int64_t size = 1;
};

/// One kind of process group of a Layout.
struct GroupKind {
  /// mode_name(*mode) for a preset kind; the group token as given for a mesh kind.
  std::string name;
  /// The ParallelMode of a preset kind; empty for a mesh kind.
  std::optional<ParallelMode> mode;
  /// The mesh dimensions the kind's groups vary, in mesh order (fastest first); for a
  /// preset kind the internal dimension names ("row", "pipe", ...); {"pp"} for embd and
  /// pos_embd.
  std::vector<std::string> dims;
  /// True when some ranks are in no group of this kind (Megatron's embd and pos_embd):
  /// they get no communicator (an MPI_UNDEFINED colour).
  bool partial = false;
  /// One line on how the kind's groups are chosen where its name does not say it
  /// (sequence_dp, embd, pos_embd); empty otherwise. Printers show it as it is.
  std::string note;
};

class Layout {
 public:
  /// Validates `config` completely (docs/reference/spec.md §1 and §5, and the mesh rules of
  /// ParallelConfig::mesh and MeshConfig) and throws ConfigError naming the offending
  /// values and the rule. world_size must be given (> 0), except with a mesh, where 0
  /// means the product of the mesh's sizes (config().world_size then holds it).
  ///
  /// With a rank map (ParallelConfig::rank_map, pgroups/layout/rank_map.hpp) every rank
  /// taken or returned below is a launcher rank: groups are the mapped ranks, ascending, and
  /// group indices keep the mesh's order of groups (by first mesh rank). The map must be a
  /// permutation of the world (ConfigError naming the first bad, duplicate or missing entry)
  /// and keep the order of every kind that varies one dimension of more than one rank
  /// (ConfigError naming the kind and a group whose launcher ranks do not ascend along it).
  /// O(world size x kinds x dimensions) to check; queries of kinds of several dimensions then cost
  /// O(group size log group size) instead of O(dimensions).
  explicit Layout(const ParallelConfig& config);

  [[nodiscard]] const ParallelConfig& config() const noexcept { return lowered_.config; }
  [[nodiscard]] bool is_mesh() const noexcept { return lowered_.config.mesh.has_value(); }
  [[nodiscard]] std::int64_t world_size() const noexcept { return lowered_.config.world_size; }
  /// For a mesh: the size of its `pp`, `tp` and `dp` dimension, 1 when absent.
  [[nodiscard]] std::int64_t pipeline_size() const noexcept { return lowered_.pipeline_size; }
  [[nodiscard]] std::int64_t tensor_size() const noexcept { return lowered_.tensor_size; }
  [[nodiscard]] std::int64_t data_parallel_size() const noexcept { return lowered_.data_parallel_size; }
  /// The side of the tensor grid: q for 2d and 2.5d, d for 3d, 0 otherwise (and for a mesh).
  [[nodiscard]] std::int64_t tensor_grid_dim() const noexcept { return lowered_.grid_dim; }
  /// The mesh every kind is computed on (for presets: tensor sub-dimensions, pipe, data).
  [[nodiscard]] const Mesh& mesh() const noexcept { return lowered_.mesh; }
  /// Where each mesh rank runs (the identity without ParallelConfig::rank_map).
  [[nodiscard]] const RankMap& rank_map() const noexcept { return rank_map_; }
  /// The shape in the notation the configuration was written in, for the first line of a
  /// plan: "data 2 x pipeline 2 x tensor 4 (2d, q=2)" or "tp 2 x dp 4 (order tp-dp, first
  /// fastest)". Printers show it as it is instead of asking which notation it was.
  [[nodiscard]] const std::string& summary() const noexcept { return lowered_.summary; }
  /// The kind that is the whole world by definition (the presets' `global`), which is
  /// created as a duplicate of the world communicator; empty for a mesh, where a kind
  /// spanning the world is found by communicator sharing (communicator_sharing.hpp).
  [[nodiscard]] std::optional<std::size_t> world_kind() const noexcept { return lowered_.world_kind; }
  /// The rank's pipeline stage: its coordinate on the pipeline dimension (`pipe` of the
  /// presets, `pp` of a mesh), 0 when there is none. Throws ConfigError for a bad rank.
  [[nodiscard]] std::int64_t pipeline_stage(std::int64_t rank) const;
  /// The pipeline dimension's name, which its kind and the queries about it take
  /// (`pipe` of the presets, `pp` of a mesh, also when the mesh has none). O(1).
  [[nodiscard]] std::string_view pipeline_name() const noexcept {
    return lowered_.pipeline_dim ? std::string_view(lowered_.mesh.dims()[*lowered_.pipeline_dim].name)
                                 : std::string_view("pp");
  }

  // ---- Group kinds by name and index -------------------------------------------------

  /// Every group kind, in creation order (`global` first for presets; the tokens' order
  /// for a mesh). A kind's index is its position here.
  [[nodiscard]] std::span<const GroupKind> group_kinds() const noexcept { return lowered_.kinds; }
  /// The kind called `name`: its exact name, or for a mesh kind the same set of
  /// dimensions in another order ("dp-tp" finds "tp-dp"). O(kinds * dimensions).
  [[nodiscard]] std::optional<std::size_t> find_group_kind(std::string_view name) const;
  /// Like find_group_kind, but throws StateError naming `name`, the kinds and the
  /// closest one when there is none.
  [[nodiscard]] std::size_t group_kind_index(std::string_view name) const;

  /// Every function below taking a `kind` throws StateError for kind >= group_kinds().size()
  /// and ConfigError for a rank outside [0, world_size). local_rank, group_index,
  /// group_member and group_of throw StateError for a rank that is not a member (only
  /// possible for a partial kind). Each is O(number of dimensions) except group_of,
  /// O(group size), and groups, O(world size).
  [[nodiscard]] std::int64_t group_size(std::size_t kind) const;
  [[nodiscard]] std::int64_t group_count(std::size_t kind) const;
  /// Whether the rank is in some group of the kind; false only for partial kinds.
  [[nodiscard]] bool is_member(std::int64_t rank, std::size_t kind) const;
  /// Whether every group of the kind, its members in mesh order, runs on ascending launcher
  /// ranks, so that a member's group rank (its place among the ascending launcher ranks,
  /// as torch and MPI number it) is its place in the mesh (a DeviceMesh coordinate). Always
  /// without a rank map, and for a kind of one dimension (the map is checked to keep it);
  /// under a map a kind of several dimensions may break it. O(1) then; otherwise
  /// O(world size x dimensions).
  [[nodiscard]] bool keeps_mesh_order(std::size_t kind) const;
  [[nodiscard]] std::int64_t local_rank(std::int64_t rank, std::size_t kind) const;
  /// The rank's group's position among the kind's groups ordered by first rank (the
  /// colour of MPI_Comm_split).
  [[nodiscard]] std::int64_t group_index(std::int64_t rank, std::size_t kind) const;
  /// The first (smallest) rank of the kind's group number `group_index`.
  [[nodiscard]] std::int64_t group_leader(std::size_t kind, std::int64_t group_index) const;
  /// The global rank at position `index` of the rank's group.
  [[nodiscard]] std::int64_t group_member(std::int64_t rank, std::size_t kind, std::int64_t index) const;
  [[nodiscard]] std::vector<std::int64_t> group_of(std::int64_t rank, std::size_t kind) const;
  /// The kind's partition key (pgroups/layout/partition_key.hpp), in O(dimensions): kinds
  /// with equal keys, of this layout or of another of the same world, have the same groups in
  /// the same order, whichever notation made them, and only they do.
  [[nodiscard]] PartitionKey partition_key(std::size_t kind) const;
  /// Every group, ascending by first rank, each ascending (Megatron's order for meshes).
  [[nodiscard]] std::vector<std::vector<std::int64_t>> groups(std::size_t kind) const;
  /// Per-kind random seed: see seed(rank, ParallelMode); a mesh kind gets the base seed.
  [[nodiscard]] std::int64_t seed(std::int64_t rank, std::size_t kind) const;

  // ---- Preset modes (forward to the kind of that name) -------------------------------

  /// The modes this configuration creates, in creation order (`global` first); empty
  /// for a mesh.
  [[nodiscard]] std::span<const ParallelMode> modes() const noexcept { return modes_; }
  /// Whether the configuration creates the mode; false for a value that is no enumerator.
  [[nodiscard]] bool has_kind(ParallelMode mode) const noexcept;
  /// Deprecated spelling of has_kind (one word, kind, since 0.2.0).
  [[deprecated("use has_kind")]] [[nodiscard]] bool has_mode(ParallelMode mode) const noexcept {
    return has_kind(mode);
  }

  /// The rank's coordinates. For presets: data, pipe and tensor, slowest first, then for
  /// 2d, 2.5d and 3d the tensor sub-coordinates fastest first, in mesh order (row, col
  /// [, dep]; i, j, k). For a mesh: its dimensions, slowest first (the reverse of mesh
  /// order). Throws ConfigError for a bad rank.
  [[nodiscard]] std::vector<Coordinate> coordinates(std::int64_t rank) const;

  /// Every function below throws StateError for a mode not in modes() and ConfigError
  /// for a rank outside [0, world_size), with the complexities of the kind functions.
  [[nodiscard]] std::int64_t group_size(ParallelMode mode) const;
  [[nodiscard]] std::int64_t group_count(ParallelMode mode) const;
  [[nodiscard]] std::int64_t local_rank(std::int64_t rank, ParallelMode mode) const;
  [[nodiscard]] std::int64_t group_index(std::int64_t rank, ParallelMode mode) const;
  [[nodiscard]] std::int64_t group_leader(ParallelMode mode, std::int64_t group_index) const;
  [[nodiscard]] std::int64_t group_member(std::int64_t rank, ParallelMode mode, std::int64_t index) const;
  [[nodiscard]] std::vector<std::int64_t> group_of(std::int64_t rank, ParallelMode mode) const;
  [[nodiscard]] std::vector<std::vector<std::int64_t>> groups(ParallelMode mode) const;

  /// Per-mode random seed of docs/reference/spec.md §6, as Colossal-AI seeds its generators: `tensor` gets
  /// `seed + tensor_local_rank + 1024 * pipeline_stage`, every other mode the base seed.
  /// Throws StateError for a mode not in modes().
  [[nodiscard]] std::int64_t seed(std::int64_t rank, ParallelMode mode) const;

  /// The kind index of a mode; throws StateError naming the mode and the modes there are,
  /// or ConfigError naming the number for a value that is no enumerator.
  [[nodiscard]] std::size_t kind_of(ParallelMode mode) const;

 private:
  /// How a kind is computed: the ranks varying `varying` on the mesh (or on the legacy
  /// block mesh), or, for embd/pos_embd, the first (and last) rank of each such group.
  struct KindShape {
    enum class Pick : std::uint8_t { all, first, first_and_last };
    bool on_legacy_block_mesh = false;
    DimMask varying = 0;
    Pick pick = Pick::all;
  };
  /// What a notation lowers to: the mesh and the kinds with their shapes, and what the
  /// notation says beside them. A Layout stores it as it is and answers every query from
  /// it, so no query asks which notation it was.
  struct Lowered {
    /// The configuration, with world_size filled in for a mesh that left it 0.
    ParallelConfig config;
    std::string summary;
    std::optional<std::size_t> world_kind;
    /// Index in mesh of the pipeline dimension, when the mesh has one.
    std::optional<std::size_t> pipeline_dim;
    std::int64_t pipeline_size = 1;
    std::int64_t tensor_size = 1;
    std::int64_t data_parallel_size = 1;
    std::int64_t grid_dim = 0;
    Mesh mesh = Mesh({{"tensor", 1}});
    /// Colossal-AI's contiguous sequence_dp blocks are no set of coordinates of mesh;
    /// they are the "block member" dimension of this reshaping of the same ranks.
    Mesh legacy_block_mesh = Mesh({{"member", 1}});
    std::vector<GroupKind> kinds;
    std::vector<KindShape> shapes;

    void add_kind(GroupKind kind, KindShape shape) {
      kinds.push_back(std::move(kind));
      shapes.push_back(shape);
    }
  };
  /// The lowering of each notation (preset_lowering.cpp, mesh_lowering.cpp); each
  /// validates the configuration and throws as the public constructor documents.
  [[nodiscard]] static Lowered lower_presets(const ParallelConfig& config);
  [[nodiscard]] static Lowered lower_mesh(const ParallelConfig& config);
  explicit Layout(Lowered lowered);

  [[nodiscard]] const KindShape& shape(std::size_t kind) const;
  [[nodiscard]] const Mesh& mesh_of(const KindShape& shape) const noexcept {
    return shape.on_legacy_block_mesh ? lowered_.legacy_block_mesh : lowered_.mesh;
  }
  void check_rank(std::int64_t rank) const;
  void check_member(std::int64_t rank, std::size_t kind) const;
  /// The mesh rank of a launcher rank, after check_rank.
  [[nodiscard]] std::int64_t mesh_rank(std::int64_t rank) const;
  /// Whether the kind's groups, mapped, keep the mesh's order (always without a map).
  [[nodiscard]] bool keeps_order(std::size_t kind) const noexcept { return rank_map_.identity() || ordered_[kind]; }
  /// The mapped, ascending group of mesh rank `mesh_rank` (a full kind's underlying group).
  [[nodiscard]] std::vector<std::int64_t> mapped_group(std::int64_t mesh_rank, const KindShape& shape) const;
  void check_map_order() const;

  Lowered lowered_;
  RankMap rank_map_;
  /// Per kind: it varies at most one dimension of more than one rank, so a valid map keeps
  /// its order and mapped answers are the mesh's answers mapped.
  std::vector<bool> ordered_;
  /// The preset kinds' modes, in creation order, and the kind index of each mode, or
  /// kNoKind: an index over lowered_.kinds, so that a mode query is O(1).
  std::vector<ParallelMode> modes_;
  static constexpr std::size_t kNoKind = static_cast<std::size_t>(-1);
  std::array<std::size_t, kParallelModeCount> mode_kinds_{};
};

/// Checks a configuration and throws like Layout's constructor; a preset is checked
/// without building its mesh and kinds (a mesh configuration is lowered whole).
void validate(const ParallelConfig& config);

}  // namespace pgroups
