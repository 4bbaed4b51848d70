#include "pgroups/layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "pgroups/error.hpp"

namespace pgroups {
namespace {

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

}  // namespace

void validate(const ParallelConfig& config) { (void)validate_and_derive(config); }

Layout::Layout(const ParallelConfig& config)
    : config_(config),
      mesh_({{"tensor", 1}}),
      legacy_block_mesh_({{"member", 1}}) {
  const Derived derived = validate_and_derive(config);
  data_parallel_size_ = derived.data_parallel_size;
  grid_dim_ = derived.grid_dim;
  mesh_ = Mesh(mesh_dims(config, derived));
  legacy_block_mesh_ = Mesh({{"member", config.world_size / config.pipeline}, {"block", config.pipeline}});

  const auto dims = mesh_.dims();
  const DimMask pipe = mesh_.mask_of({"pipe"});
  const DimMask data = mesh_.mask_of({"data"});
  const DimMask all = (DimMask{1} << dims.size()) - 1;
  const DimMask tensor = all & ~pipe & ~data;

  auto add = [this](ParallelMode mode, DimMask varying, bool legacy = false) {
    modes_.push_back(mode);
    shapes_[static_cast<std::size_t>(mode)] = ModeShape{legacy, varying};
  };
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
      } else {
        add(ParallelMode::sequence_dp, data | tensor);
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

bool Layout::has_mode(ParallelMode mode) const noexcept {
  return std::find(modes_.begin(), modes_.end(), mode) != modes_.end();
}

const Layout::ModeShape& Layout::shape(ParallelMode mode) const {
  if (!has_mode(mode)) {
    std::vector<std::string_view> names;
    for (ParallelMode m : modes_) names.push_back(mode_name(m));
    throw StateError(fmt::format("mode {} is not created for {}; the modes are: {}", mode_name(mode),
                                 describe(config_), fmt::join(names, ", ")));
  }
  return shapes_[static_cast<std::size_t>(mode)];
}

void Layout::check_rank(std::int64_t rank) const {
  if (rank < 0 || rank >= config_.world_size) {
    throw ConfigError(fmt::format("rank {} is outside the world of {} ranks (valid: 0..{})", rank,
                                  config_.world_size, config_.world_size - 1));
  }
}

std::vector<Coordinate> Layout::coordinates(std::int64_t rank) const {
  check_rank(rank);
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

std::int64_t Layout::group_size(ParallelMode mode) const {
  const ModeShape& s = shape(mode);
  return mesh_of(s).group_size(s.varying);
}

std::int64_t Layout::group_count(ParallelMode mode) const {
  const ModeShape& s = shape(mode);
  return mesh_of(s).group_count(s.varying);
}

std::int64_t Layout::local_rank(std::int64_t rank, ParallelMode mode) const {
  const ModeShape& s = shape(mode);
  check_rank(rank);
  return mesh_of(s).local_rank(rank, s.varying);
}

std::int64_t Layout::group_index(std::int64_t rank, ParallelMode mode) const {
  const ModeShape& s = shape(mode);
  check_rank(rank);
  return mesh_of(s).group_index(rank, s.varying);
}

std::int64_t Layout::group_leader(ParallelMode mode, std::int64_t group_index) const {
  const ModeShape& s = shape(mode);
  return mesh_of(s).group_leader(group_index, s.varying);
}

std::int64_t Layout::group_member(std::int64_t rank, ParallelMode mode, std::int64_t index) const {
  const ModeShape& s = shape(mode);
  check_rank(rank);
  return mesh_of(s).group_member(rank, s.varying, index);
}

std::vector<std::int64_t> Layout::group_of(std::int64_t rank, ParallelMode mode) const {
  const ModeShape& s = shape(mode);
  check_rank(rank);
  return mesh_of(s).group_of(rank, s.varying);
}

std::vector<std::vector<std::int64_t>> Layout::groups(ParallelMode mode) const {
  const ModeShape& s = shape(mode);
  return mesh_of(s).groups(s.varying);
}

std::int64_t Layout::seed(std::int64_t rank, ParallelMode mode) const {
  check_rank(rank);
  if (mode != ParallelMode::tensor) return config_.seed;
  const std::int64_t tensor_local = rank % config_.tensor_size;
  const std::int64_t pipeline_stage = (rank / config_.tensor_size) % config_.pipeline;
  // Wrapping arithmetic: a seed only has to be deterministic, and plans of absurd sizes
  // must not overflow a signed integer.
  const auto seed = static_cast<std::uint64_t>(config_.seed) + static_cast<std::uint64_t>(tensor_local) +
                    1024U * static_cast<std::uint64_t>(pipeline_stage);
  return static_cast<std::int64_t>(seed);
}

}  // namespace pgroups
