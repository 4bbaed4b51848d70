#include "pgroups/layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "../common/did_you_mean.hpp"
#include "pgroups/error.hpp"

namespace pgroups {
namespace {

// User text quoted in a message: control bytes escaped, long text cut.
std::string printable(std::string_view text) {
  std::string out;
  for (char ch : text.substr(0, 64)) {
    const auto byte = static_cast<unsigned char>(ch);
    out += byte < 0x20 || byte >= 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, ch);
  }
  if (text.size() > 64) out += "...";
  return out;
}


// Exact integer roots: the floating-point estimate is corrected by stepping, so the
// answer is right for every 64-bit value.
std::int64_t integer_root(std::int64_t value, int degree) {
  auto power = [degree](std::int64_t base, std::int64_t* out) {
    std::int64_t result = 1;
    for (int i = 0; i < degree; ++i) {
      if (__builtin_mul_overflow(result, base, &result)) return false;
    }
    *out = result;
    return true;
  };
  auto root = static_cast<std::int64_t>(std::llround(std::pow(static_cast<double>(value), 1.0 / degree)));
  root = std::max<std::int64_t>(root, 0);
  std::int64_t p = 0;
  while (root > 0 && (!power(root, &p) || p > value)) --root;
  while (power(root + 1, &p) && p <= value) ++root;
  return root;
}

std::int64_t exact_root_or_zero(std::int64_t value, int degree) {
  const std::int64_t root = integer_root(value, degree);
  std::int64_t p = 1;
  for (int i = 0; i < degree; ++i) p *= root;
  return p == value ? root : 0;
}

struct Derived {
  std::int64_t data_parallel_size = 1;
  std::int64_t grid_dim = 0;
};

Derived validate_and_derive(const ParallelConfig& c) {
  if (c.mesh) return {};
  const std::string_view mode = tensor_mode_name(c.tensor_mode);
  if (c.world_size < 1) {
    throw ConfigError(fmt::format("world size {} is invalid: it must be a positive integer", c.world_size));
  }
  if (c.pipeline < 1) {
    throw ConfigError(fmt::format("pipeline size {} is invalid: it must be a positive integer", c.pipeline));
  }
  if (c.tensor_size < 1) {
    throw ConfigError(fmt::format("tensor size {} is invalid: it must be a positive integer", c.tensor_size));
  }
  if (c.depth && c.tensor_mode != TensorMode::tensor_2p5d) {
    throw ConfigError(fmt::format("depth {} is not allowed with mode {}: depth belongs to mode 2.5d only", *c.depth, mode));
  }
  if (c.tensor_mode == TensorMode::tensor_2p5d && !c.depth) {
    throw ConfigError("mode 2.5d requires a depth (tensor size = q * q * depth)");
  }
  if (c.depth && *c.depth < 1) {
    throw ConfigError(fmt::format("depth {} is invalid: the 2.5d depth must be a positive integer", *c.depth));
  }
  std::int64_t model_size = 0;
  if (__builtin_mul_overflow(c.pipeline, c.tensor_size, &model_size)) {
    throw ConfigError(fmt::format("pipeline size {} * tensor size {} overflows 64 bits", c.pipeline, c.tensor_size));
  }
  // Colossal-AI checks divisibility before the mode's shape; keep its order so the same
  // configuration reports the same rule.
  if (c.world_size % model_size != 0) {
    throw ConfigError(fmt::format(
        "world size {} is not divisible by pipeline size {} * tensor size {} = {}: the data-parallel size "
        "W / (pipeline * tensor) must be a whole number",
        c.world_size, c.pipeline, c.tensor_size, model_size));
  }
  Derived derived;
  derived.data_parallel_size = c.world_size / model_size;
  switch (c.tensor_mode) {
    case TensorMode::tensor_2d:
      derived.grid_dim = exact_root_or_zero(c.tensor_size, 2);
      if (derived.grid_dim == 0) {
        throw ConfigError(fmt::format("tensor size {} is not a perfect square, required by mode 2d", c.tensor_size));
      }
      break;
    case TensorMode::tensor_2p5d:
      if (c.tensor_size % *c.depth == 0) derived.grid_dim = exact_root_or_zero(c.tensor_size / *c.depth, 2);
      if (derived.grid_dim == 0) {
        throw ConfigError(fmt::format(
            "tensor size {} is not depth {} times a perfect square, required by mode 2.5d (tensor size = q * q * depth)",
            c.tensor_size, *c.depth));
      }
      break;
    case TensorMode::tensor_3d:
      derived.grid_dim = exact_root_or_zero(c.tensor_size, 3);
      if (derived.grid_dim == 0) {
        throw ConfigError(fmt::format("tensor size {} is not a perfect cube, required by mode 3d", c.tensor_size));
      }
      break;
    default:
      break;
  }
  return derived;
}

// The tensor-local index t is split into the mode's sub-coordinates (docs/spec.md §2), fastest
// first, then pipe and data: the mesh's mixed-radix order is the rank order.
std::vector<MeshDim> mesh_dims(const ParallelConfig& c, const Derived& derived) {
  const std::int64_t q = derived.grid_dim;
  std::vector<MeshDim> dims;
  switch (c.tensor_mode) {
    case TensorMode::tensor_2d:
      dims = {{"row", q}, {"col", q}};
      break;
    case TensorMode::tensor_2p5d:
      dims = {{"row", q}, {"col", q}, {"dep", *c.depth}};
      break;
    case TensorMode::tensor_3d:
      dims = {{"i", q}, {"j", q}, {"k", q}};
      break;
    default:
      dims = {{"tensor", c.tensor_size}};
      break;
  }
  dims.push_back({"pipe", c.pipeline});
  dims.push_back({"data", derived.data_parallel_size});
  return dims;
}

std::string tensor_shape(const ParallelConfig& c, std::int64_t q) {
  switch (c.tensor_mode) {
    case TensorMode::tensor_2d: return fmt::format("2d, q={}", q);
    case TensorMode::tensor_2p5d: return fmt::format("2.5d, q={}, depth={}", q, *c.depth);
    case TensorMode::tensor_3d: return fmt::format("3d, depth={}", q);
    default: return std::string(tensor_mode_name(c.tensor_mode));
  }
}

std::optional<std::size_t> find_dim(const Mesh& mesh, std::string_view name) {
  for (std::size_t i = 0; i < mesh.dims().size(); ++i) {
    if (mesh.dims()[i].name == name) return i;
  }
  return std::nullopt;
}

// Dimension names become parts of group tokens and of Megatron-style order strings, so
// the separators '-', '=' and ',' cannot appear in them.
void check_dim_name(const MeshDim& dim) {
  if (dim.name.empty()) throw ConfigError("a mesh dimension has an empty name");
  for (char ch : dim.name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    if (!ok) {
      throw ConfigError(fmt::format("mesh dimension name '{}' is invalid: names use letters, digits and '_' only",
                                    printable(dim.name)));
    }
  }
  if (dim.name == kEmbeddingGroup || dim.name == kPositionEmbeddingGroup) {
    throw ConfigError(fmt::format("mesh dimension name '{}' is reserved for Megatron's embedding group", dim.name));
  }
}

// Dimension names are short ("tp", "dp"), where the general suggestion only forgives a
// change of case. Here one edit (or a swap of neighbours) is a plausible typo when it
// points at one name, preferring names with the same first letter ("tpp" -> "tp").
std::string suggest_dim(std::string_view word, std::span<const std::string_view> names) {
  if (std::string suggestion = detail::did_you_mean(word, names); !suggestion.empty()) return suggestion;
  auto one_edit = [](std::string_view a, std::string_view b) {
    if (a.size() < b.size()) std::swap(a, b);
    if (a.size() - b.size() > 1) return false;
    std::size_t i = 0;
    while (i < b.size() && a[i] == b[i]) ++i;
    if (a.size() != b.size()) return a.substr(i + 1) == b.substr(i);
    if (i == a.size()) return false;
    if (a.substr(i + 1) == b.substr(i + 1)) return true;
    return i + 1 < a.size() && a[i] == b[i + 1] && a[i + 1] == b[i] && a.substr(i + 2) == b.substr(i + 2);
  };
  auto same_but_case = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  std::vector<std::string_view> close;
  for (std::string_view name : names) {
    if (same_but_case(word, name)) return fmt::format(" (did you mean {}?)", name);
    if (one_edit(word, name)) close.push_back(name);
  }
  if (close.size() > 1 && !word.empty()) {
    std::erase_if(close, [&](std::string_view name) { return name.front() != word.front(); });
  }
  if (close.size() == 1) return fmt::format(" (did you mean {}?)", close.front());
  return {};
}

void check_not_mixed(const ParallelConfig& c) {
  std::vector<std::string> mixed;
  if (c.pipeline != 1) mixed.push_back(fmt::format("pipeline={}", c.pipeline));
  if (c.tensor_size != 1) mixed.push_back(fmt::format("tensor={}", c.tensor_size));
  if (c.tensor_mode != TensorMode::none) mixed.push_back(fmt::format("mode={}", tensor_mode_name(c.tensor_mode)));
  if (c.depth) mixed.push_back(fmt::format("depth={}", *c.depth));
  if (c.legacy_sequence_dp) mixed.push_back("legacy_sequence_dp");
  if (!mixed.empty()) {
    throw ConfigError(fmt::format("a mesh cannot be combined with {}: the mesh's dimensions replace pipeline, tensor, "
                                  "mode and depth",
                                  fmt::join(mixed, ", ")));
  }
}

}  // namespace

void validate(const ParallelConfig& config) {
  if (config.mesh) {
    (void)Layout(config);
  } else {
    (void)validate_and_derive(config);
  }
}

Layout::Layout(const ParallelConfig& config)
    : config_(config), mesh_({{"tensor", 1}}), legacy_block_mesh_({{"member", 1}}) {
  mode_kinds_.fill(kNoKind);
  if (config_.mesh) {
    build_mesh();
  } else {
    build_presets();
  }
}

void Layout::add_kind(GroupKind kind, KindShape shape) {
  if (kind.mode) {
    modes_.push_back(*kind.mode);
    mode_kinds_[static_cast<std::size_t>(*kind.mode)] = kinds_.size();
  }
  kinds_.push_back(std::move(kind));
  shapes_.push_back(shape);
}

void Layout::build_presets() {
  const ParallelConfig& config = config_;
  const Derived derived = validate_and_derive(config);
  pipeline_size_ = config.pipeline;
  tensor_size_ = config.tensor_size;
  data_parallel_size_ = derived.data_parallel_size;
  grid_dim_ = derived.grid_dim;
  mesh_ = Mesh(mesh_dims(config, derived));
  legacy_block_mesh_ = Mesh({{"member", config.world_size / config.pipeline}, {"block", config.pipeline}});

  pipeline_dim_ = find_dim(mesh_, "pipe");
  summary_ = fmt::format("data {} x pipeline {} x tensor {} ({})", data_parallel_size_, pipeline_size_, tensor_size_,
                         tensor_shape(config, grid_dim_));

  const auto dims = mesh_.dims();
  const DimMask pipe = mesh_.mask_of({"pipe"});
  const DimMask data = mesh_.mask_of({"data"});
  const DimMask all = (DimMask{1} << dims.size()) - 1;
  const DimMask tensor = all & ~pipe & ~data;

  auto add = [this](ParallelMode mode, DimMask varying, bool legacy = false) {
    const Mesh& on = legacy ? legacy_block_mesh_ : mesh_;
    GroupKind kind{std::string(mode_name(mode)), mode, {}, false, {}};
    for (std::size_t i = 0; i < on.dims().size(); ++i) {
      if (varying >> i & 1U) kind.dims.push_back(on.dims()[i].name);
    }
    add_kind(std::move(kind), KindShape{legacy, varying, KindShape::Pick::all});
  };
  world_kind_ = kinds_.size();
  add(ParallelMode::global, all);
  add(ParallelMode::data, data);
  add(ParallelMode::model, pipe | tensor);
  if (config.pipeline > 1) add(ParallelMode::pipe, pipe);
  add(ParallelMode::tensor, tensor);
  switch (config.tensor_mode) {
    case TensorMode::none:
      break;
    case TensorMode::tensor_1d:
      add(ParallelMode::tensor_1d, tensor);
      break;
    case TensorMode::sequence:
      add(ParallelMode::sequence, tensor);
      if (config.legacy_sequence_dp) {
        add(ParallelMode::sequence_dp, legacy_block_mesh_.mask_of({"member"}), true);
        kinds_.back().note = "Colossal-AI's contiguous blocks of W/pipeline ranks (--legacy-sequence-dp)";
      } else {
        add(ParallelMode::sequence_dp, data | tensor);
        kinds_.back().note =
            "all ranks of one pipeline stage (docs/spec.md §3; --legacy-sequence-dp for Colossal-AI's blocks)";
      }
      break;
    case TensorMode::tensor_2d:
      add(ParallelMode::tensor_2d_row, mesh_.mask_of({"row"}));
      add(ParallelMode::tensor_2d_col, mesh_.mask_of({"col"}));
      break;
    case TensorMode::tensor_2p5d:
      add(ParallelMode::tensor_2p5d_col, mesh_.mask_of({"col"}));
      add(ParallelMode::tensor_2p5d_row, mesh_.mask_of({"row"}));
      add(ParallelMode::tensor_2p5d_dep, mesh_.mask_of({"dep"}));
      add(ParallelMode::tensor_2p5d_xz, mesh_.mask_of({"col", "dep"}));
      break;
    case TensorMode::tensor_3d:
      add(ParallelMode::tensor_3d_input, mesh_.mask_of({"j"}));
      add(ParallelMode::tensor_3d_weight, mesh_.mask_of({"i"}));
      add(ParallelMode::tensor_3d_output, mesh_.mask_of({"k"}));
      add(ParallelMode::tensor_3d_input_x_weight, mesh_.mask_of({"i", "j"}));
      add(ParallelMode::tensor_3d_output_x_weight, mesh_.mask_of({"i", "k"}));
      break;
  }
}

void Layout::build_mesh() {
  check_not_mixed(config_);
  const MeshConfig& mesh_config = *config_.mesh;
  if (mesh_config.dims.empty()) throw ConfigError("a mesh needs at least one dimension, e.g. tp=2,dp=4");
  for (const MeshDim& dim : mesh_config.dims) check_dim_name(dim);
  mesh_ = Mesh(mesh_config.dims);
  if (config_.world_size < 0) {
    throw ConfigError(fmt::format("world size {} is invalid: it must be a positive integer", config_.world_size));
  }
  if (config_.world_size != 0 && config_.world_size != mesh_.size()) {
    throw ConfigError(fmt::format("world size {} does not match the {}, whose sizes multiply to {}",
                                  config_.world_size, describe(MeshConfig{mesh_config.dims, {}}), mesh_.size()));
  }
  config_.world_size = mesh_.size();
  legacy_block_mesh_ = Mesh({{"member", mesh_.size()}});
  auto size_of = [this](std::string_view name) {
    for (const MeshDim& dim : mesh_.dims()) {
      if (dim.name == name) return dim.size;
    }
    return std::int64_t{1};
  };
  pipeline_dim_ = find_dim(mesh_, "pp");
  std::string sizes;
  for (const MeshDim& dim : mesh_.dims()) sizes += fmt::format("{}{} {}", sizes.empty() ? "" : " x ", dim.name, dim.size);
  summary_ = fmt::format("{} (order {}, first fastest)", sizes, mesh_order(mesh_config));
  pipeline_size_ = size_of("pp");
  tensor_size_ = size_of("tp");
  data_parallel_size_ = size_of("dp");

  std::vector<std::string> tokens = mesh_config.groups;
  if (tokens.empty()) {
    for (const MeshDim& dim : mesh_.dims()) tokens.push_back(dim.name);
  }
  std::vector<std::string_view> dim_names;
  for (const MeshDim& dim : mesh_.dims()) dim_names.emplace_back(dim.name);
  for (const std::string& token : tokens) {
    KindShape shape;
    if (token == kEmbeddingGroup || token == kPositionEmbeddingGroup) {
      if (!find_dim(mesh_, "pp")) {
        throw ConfigError(fmt::format("group '{}' needs a 'pp' dimension in the mesh, which has {}", printable(token),
                                      fmt::join(dim_names, ", ")));
      }
      shape.varying = mesh_.mask_of({"pp"});
      shape.pick = token == kEmbeddingGroup ? KindShape::Pick::first_and_last : KindShape::Pick::first;
    } else {
      if (token.empty()) throw ConfigError("a group token is empty; write dimension names joined by '-', e.g. tp-dp");
      for (std::string_view part : split_group_token(token)) {
        if (part.empty()) {
          throw ConfigError(
              fmt::format("group '{}' has an empty dimension name; write names joined by one '-'", printable(token)));
        }
        const auto index = find_dim(mesh_, part);
        if (!index) {
          std::string hint = suggest_dim(part, dim_names);
          if (hint.empty()) {
            hint = fmt::format(" (to name it, add it to the mesh, e.g. {}=1)", printable(part));
          }
          throw ConfigError(fmt::format("unknown dimension '{}' in group '{}'; the mesh has {}{}", printable(part),
                                        printable(token), fmt::join(dim_names, ", "), hint));
        }
        const DimMask bit = DimMask{1} << *index;
        if (shape.varying & bit) {
          throw ConfigError(fmt::format("dimension '{}' appears twice in group '{}'", part, printable(token)));
        }
        shape.varying |= bit;
      }
    }
    for (std::size_t k = 0; k < kinds_.size(); ++k) {
      if (shapes_[k].varying == shape.varying && shapes_[k].pick == shape.pick) {
        throw ConfigError(fmt::format("group '{}' repeats group '{}': both vary the same dimensions",
                                      printable(token), printable(kinds_[k].name)));
      }
    }
    GroupKind kind{token, std::nullopt, {}, shape.pick != KindShape::Pick::all, {}};
    if (token == kEmbeddingGroup) {
      kind.note = "the first and last rank of each pp group (Megatron's embedding group)";
    } else if (token == kPositionEmbeddingGroup) {
      kind.note = "the first rank of each pp group (Megatron's position-embedding group)";
    }
    for (std::size_t i = 0; i < dim_names.size(); ++i) {
      if (shape.varying >> i & 1U) kind.dims.emplace_back(dim_names[i]);
    }
    add_kind(std::move(kind), shape);
  }
}

std::optional<std::size_t> Layout::find_group_kind(std::string_view name) const {
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    if (kinds_[k].name == name) return k;
  }
  if (!is_mesh() || name == kEmbeddingGroup || name == kPositionEmbeddingGroup) return std::nullopt;
  DimMask mask = 0;
  for (std::string_view part : split_group_token(name)) {
    const auto index = find_dim(mesh_, part);
    if (!index || (mask >> *index & 1U)) return std::nullopt;
    mask |= DimMask{1} << *index;
  }
  for (std::size_t k = 0; k < kinds_.size(); ++k) {
    if (shapes_[k].pick == KindShape::Pick::all && shapes_[k].varying == mask) return k;
  }
  return std::nullopt;
}

std::size_t Layout::group_kind_index(std::string_view name) const {
  if (const auto kind = find_group_kind(name)) return *kind;
  std::vector<std::string_view> names;
  for (const GroupKind& kind : kinds_) names.emplace_back(kind.name);
  throw StateError(fmt::format("group kind '{}' is not created for {}; the kinds are: {}{}", printable(name), describe(config_),
                               fmt::join(names, ", "), suggest_dim(name, names)));
}

std::size_t Layout::kind_of(ParallelMode mode) const {
  // A value that is no enumerator (a cast from a wrong integer) is a ConfigError naming
  // it (mode_name throws), never an index past the table.
  if (static_cast<std::size_t>(mode) >= mode_kinds_.size()) (void)mode_name(mode);
  const std::size_t kind = mode_kinds_[static_cast<std::size_t>(mode)];
  if (kind == kNoKind) {
    std::vector<std::string_view> names;
    for (ParallelMode m : modes_) names.push_back(mode_name(m));
    throw StateError(fmt::format("mode {} is not created for {}; the modes are: {}", mode_name(mode),
                                 describe(config_), names.empty() ? std::string("none (a mesh has group kinds)")
                                                                  : fmt::format("{}", fmt::join(names, ", "))));
  }
  return kind;
}

bool Layout::has_mode(ParallelMode mode) const noexcept {
  const auto index = static_cast<std::size_t>(mode);
  return index < mode_kinds_.size() && mode_kinds_[index] != kNoKind;
}

const Layout::KindShape& Layout::shape(std::size_t kind) const {
  if (kind >= kinds_.size()) {
    throw StateError(fmt::format("group kind index {} is out of range: {} has {} kinds", kind, describe(config_),
                                 kinds_.size()));
  }
  return shapes_[kind];
}

std::optional<std::pair<bool, DimMask>> Layout::partition_key(std::size_t kind) const {
  const KindShape& s = shape(kind);
  if (s.pick != KindShape::Pick::all) return std::nullopt;
  const Mesh& mesh = mesh_of(s);
  DimMask varying = 0;
  for (std::size_t dim = 0; dim < mesh.dims().size(); ++dim) {
    if ((s.varying >> dim & 1U) != 0 && mesh.dims()[dim].size > 1) varying |= DimMask{1} << dim;
  }
  return std::pair{s.on_legacy_block_mesh, varying};
}

void Layout::check_rank(std::int64_t rank) const {
  if (rank < 0 || rank >= config_.world_size) {
    throw ConfigError(fmt::format("rank {} is outside the world of {} ranks (valid: 0..{})", rank,
                                  config_.world_size, config_.world_size - 1));
  }
}

void Layout::check_member(std::int64_t rank, std::size_t kind) const {
  if (!is_member(rank, kind)) {
    throw StateError(fmt::format("rank {} is in no group of kind '{}' (only the {} pipeline stage{} are)", rank,
                                 kinds_[kind].name,
                                 shapes_[kind].pick == KindShape::Pick::first ? "first" : "first and last",
                                 shapes_[kind].pick == KindShape::Pick::first ? " ranks" : "s' ranks"));
  }
}

std::vector<Coordinate> Layout::coordinates(std::int64_t rank) const {
  check_rank(rank);
  if (is_mesh()) {
    std::vector<Coordinate> coords;
    const auto dims = mesh_.dims();
    for (std::size_t i = dims.size(); i-- > 0;) coords.push_back({dims[i].name, mesh_.coordinate(rank, i), dims[i].size});
    return coords;
  }
  const std::int64_t t = rank % config_.tensor_size;
  std::vector<Coordinate> coords = {
      {"data", rank / (config_.tensor_size * config_.pipeline), data_parallel_size_},
      {"pipe", (rank / config_.tensor_size) % config_.pipeline, config_.pipeline},
      {"tensor", t, config_.tensor_size},
  };
  const auto dims = mesh_.dims();
  if (grid_dim_ > 0) {
    for (std::size_t i = 0; i + 2 < dims.size(); ++i) {
      coords.push_back({dims[i].name, mesh_.coordinate(rank, i), dims[i].size});
    }
  }
  return coords;
}

// ---- Kinds ----------------------------------------------------------------------------
// A partial kind (embd, pos_embd) keeps the pp groups' colours and leaders and picks
// position 0 (and the last position) of each.

std::int64_t Layout::group_size(std::size_t kind) const {
  const KindShape& s = shape(kind);
  const std::int64_t full = mesh_of(s).group_size(s.varying);
  switch (s.pick) {
    case KindShape::Pick::first:
      return 1;
    case KindShape::Pick::first_and_last:
      return full > 1 ? 2 : 1;
    default:
      return full;
  }
}

std::int64_t Layout::group_count(std::size_t kind) const {
  const KindShape& s = shape(kind);
  return mesh_of(s).group_count(s.varying);
}

bool Layout::is_member(std::int64_t rank, std::size_t kind) const {
  const KindShape& s = shape(kind);
  check_rank(rank);
  if (s.pick == KindShape::Pick::all) return true;
  const std::int64_t position = mesh_.local_rank(rank, s.varying);
  const std::int64_t last = mesh_.group_size(s.varying) - 1;
  return position == 0 || (s.pick == KindShape::Pick::first_and_last && position == last);
}

std::int64_t Layout::local_rank(std::int64_t rank, std::size_t kind) const {
  const KindShape& s = shape(kind);
  check_member(rank, kind);
  const std::int64_t position = mesh_of(s).local_rank(rank, s.varying);
  return s.pick == KindShape::Pick::all ? position : (position == 0 ? 0 : 1);
}

std::int64_t Layout::group_index(std::int64_t rank, std::size_t kind) const {
  const KindShape& s = shape(kind);
  check_member(rank, kind);
  return mesh_of(s).group_index(rank, s.varying);
}

std::int64_t Layout::group_leader(std::size_t kind, std::int64_t group_index) const {
  const KindShape& s = shape(kind);
  return mesh_of(s).group_leader(group_index, s.varying);
}

std::int64_t Layout::group_member(std::int64_t rank, std::size_t kind, std::int64_t index) const {
  const KindShape& s = shape(kind);
  check_member(rank, kind);
  if (s.pick == KindShape::Pick::all) return mesh_of(s).group_member(rank, s.varying, index);
  const std::int64_t size = group_size(kind);
  if (index < 0 || index >= size) {
    throw ConfigError(fmt::format("member index {} is outside a group of {} ranks", index, size));
  }
  return mesh_.group_member(rank, s.varying, index == 0 ? 0 : mesh_.group_size(s.varying) - 1);
}

std::vector<std::int64_t> Layout::group_of(std::int64_t rank, std::size_t kind) const {
  const KindShape& s = shape(kind);
  check_member(rank, kind);
  if (s.pick == KindShape::Pick::all) return mesh_of(s).group_of(rank, s.varying);
  std::vector<std::int64_t> members;
  for (std::int64_t i = 0; i < group_size(kind); ++i) members.push_back(group_member(rank, kind, i));
  return members;
}

std::vector<std::vector<std::int64_t>> Layout::groups(std::size_t kind) const {
  const KindShape& s = shape(kind);
  std::vector<std::vector<std::int64_t>> all = mesh_of(s).groups(s.varying);
  if (s.pick == KindShape::Pick::all) return all;
  for (std::vector<std::int64_t>& group : all) {
    std::vector<std::int64_t> picked = {group.front()};
    if (s.pick == KindShape::Pick::first_and_last && group.size() > 1) picked.push_back(group.back());
    group = std::move(picked);
  }
  return all;
}

std::int64_t Layout::pipeline_stage(std::int64_t rank) const {
  check_rank(rank);
  return pipeline_dim_ ? mesh_.coordinate(rank, *pipeline_dim_) : 0;
}

std::int64_t Layout::seed(std::int64_t rank, std::size_t kind) const {
  (void)shape(kind);
  check_rank(rank);
  if (kinds_[kind].mode != ParallelMode::tensor) return config_.seed;
  const std::int64_t tensor_local = local_rank(rank, kind);
  const std::int64_t pipeline_stage = pipeline_dim_ ? mesh_.coordinate(rank, *pipeline_dim_) : 0;
  // Wrapping arithmetic: a seed only has to be deterministic, and plans of absurd sizes
  // must not overflow a signed integer.
  const auto seed = static_cast<std::uint64_t>(config_.seed) + static_cast<std::uint64_t>(tensor_local) +
                    1024U * static_cast<std::uint64_t>(pipeline_stage);
  return static_cast<std::int64_t>(seed);
}

// ---- Modes forward to their kinds -----------------------------------------------------

std::int64_t Layout::group_size(ParallelMode mode) const { return group_size(kind_of(mode)); }
std::int64_t Layout::group_count(ParallelMode mode) const { return group_count(kind_of(mode)); }
std::int64_t Layout::local_rank(std::int64_t rank, ParallelMode mode) const { return local_rank(rank, kind_of(mode)); }
std::int64_t Layout::group_index(std::int64_t rank, ParallelMode mode) const {
  return group_index(rank, kind_of(mode));
}
std::int64_t Layout::group_leader(ParallelMode mode, std::int64_t group_index) const {
  return group_leader(kind_of(mode), group_index);
}
std::int64_t Layout::group_member(std::int64_t rank, ParallelMode mode, std::int64_t index) const {
  return group_member(rank, kind_of(mode), index);
}
std::vector<std::int64_t> Layout::group_of(std::int64_t rank, ParallelMode mode) const {
  return group_of(rank, kind_of(mode));
}
std::vector<std::vector<std::int64_t>> Layout::groups(ParallelMode mode) const { return groups(kind_of(mode)); }
std::int64_t Layout::seed(std::int64_t rank, ParallelMode mode) const { return seed(rank, kind_of(mode)); }

}  // namespace pgroups
