// A Colossal-AI preset (pipeline, tensor, mode, depth) lowered to a mesh and the
// ParallelMode kinds on it.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lowering.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"

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

// The tensor-local index t is split into the mode's sub-coordinates (docs/reference/spec.md §2), fastest
// first, then pipe and data: the mesh's mixed-radix order is the rank order.
std::vector<MeshDim> mesh_dims(const ParallelConfig& c, const detail::PresetSizes& sizes) {
  const std::int64_t q = sizes.grid_dim;
  std::vector<MeshDim> dims;
  switch (c.tensor_mode) {
    case TensorMode::tensor_2d: dims = {{"row", q}, {"col", q}}; break;
    case TensorMode::tensor_2p5d: dims = {{"row", q}, {"col", q}, {"dep", *c.depth}}; break;
    case TensorMode::tensor_3d: dims = {{"i", q}, {"j", q}, {"k", q}}; break;
    default: dims = {{"tensor", c.tensor_size}}; break;
  }
  dims.push_back({"pipe", c.pipeline});
  dims.push_back({"data", sizes.data_parallel_size});
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

}  // namespace

detail::PresetSizes detail::check_preset(const ParallelConfig& c) {
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
    throw ConfigError(
        fmt::format("depth {} is not allowed with mode {}: depth belongs to mode 2.5d only", *c.depth, mode));
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
    throw ConfigError(
        fmt::format("world size {} is not divisible by pipeline size {} * tensor size {} = {}: the data-parallel size "
                    "W / (pipeline * tensor) must be a whole number",
                    c.world_size, c.pipeline, c.tensor_size, model_size));
  }
  PresetSizes sizes;
  sizes.data_parallel_size = c.world_size / model_size;
  switch (c.tensor_mode) {
    case TensorMode::tensor_2d:
      sizes.grid_dim = exact_root_or_zero(c.tensor_size, 2);
      if (sizes.grid_dim == 0) {
        throw ConfigError(fmt::format("tensor size {} is not a perfect square, required by mode 2d", c.tensor_size));
      }
      break;
    case TensorMode::tensor_2p5d:
      if (c.tensor_size % *c.depth == 0) sizes.grid_dim = exact_root_or_zero(c.tensor_size / *c.depth, 2);
      if (sizes.grid_dim == 0) {
        throw ConfigError(
            fmt::format("tensor size {} is not depth {} times a perfect square, required by mode 2.5d (tensor size = q "
                        "* q * depth)",
                        c.tensor_size, *c.depth));
      }
      break;
    case TensorMode::tensor_3d:
      sizes.grid_dim = exact_root_or_zero(c.tensor_size, 3);
      if (sizes.grid_dim == 0) {
        throw ConfigError(fmt::format("tensor size {} is not a perfect cube, required by mode 3d", c.tensor_size));
      }
      break;
    default: break;
  }
  return sizes;
}

Layout::Lowered Layout::lower_presets(const ParallelConfig& config) {
  const detail::PresetSizes sizes = detail::check_preset(config);
  Lowered out;
  out.config = config;
  out.pipeline_size = config.pipeline;
  out.tensor_size = config.tensor_size;
  out.data_parallel_size = sizes.data_parallel_size;
  out.grid_dim = sizes.grid_dim;
  out.mesh = Mesh(mesh_dims(config, sizes));
  out.legacy_block_mesh = Mesh({{"member", config.world_size / config.pipeline}, {"block", config.pipeline}});
  out.pipeline_dim = detail::find_dim(out.mesh, "pipe");
  out.summary = fmt::format("data {} x pipeline {} x tensor {} ({})", out.data_parallel_size, out.pipeline_size,
                            out.tensor_size, tensor_shape(config, out.grid_dim));

  const Mesh& mesh = out.mesh;
  const DimMask pipe = mesh.mask_of({"pipe"});
  const DimMask data = mesh.mask_of({"data"});
  const DimMask all = (DimMask{1} << mesh.dims().size()) - 1;
  const DimMask tensor = all & ~pipe & ~data;

  auto add = [&out](ParallelMode mode, DimMask varying, bool legacy = false) {
    const Mesh& on = legacy ? out.legacy_block_mesh : out.mesh;
    GroupKind kind{std::string(mode_name(mode)), mode, {}, false, {}};
    for (std::size_t i = 0; i < on.dims().size(); ++i) {
      if (varying >> i & 1U) kind.dims.push_back(on.dims()[i].name);
    }
    out.add_kind(std::move(kind), KindShape{legacy, varying, KindShape::Pick::all});
  };
  out.world_kind = out.kinds.size();
  add(ParallelMode::global, all);
  add(ParallelMode::data, data);
  add(ParallelMode::model, pipe | tensor);
  if (config.pipeline > 1) add(ParallelMode::pipe, pipe);
  add(ParallelMode::tensor, tensor);
  switch (config.tensor_mode) {
    case TensorMode::none: break;
    case TensorMode::tensor_1d: add(ParallelMode::tensor_1d, tensor); break;
    case TensorMode::sequence:
      add(ParallelMode::sequence, tensor);
      if (config.legacy_sequence_dp) {
        add(ParallelMode::sequence_dp, out.legacy_block_mesh.mask_of({"member"}), true);
        out.kinds.back().note = "Colossal-AI's contiguous blocks of W/pipeline ranks (--legacy-sequence-dp)";
      } else {
        add(ParallelMode::sequence_dp, data | tensor);
        out.kinds.back().note =
            "all ranks of one pipeline stage (docs/reference/spec.md §3; --legacy-sequence-dp for Colossal-AI's "
            "blocks)";
      }
      break;
    case TensorMode::tensor_2d:
      add(ParallelMode::tensor_2d_row, mesh.mask_of({"row"}));
      add(ParallelMode::tensor_2d_col, mesh.mask_of({"col"}));
      break;
    case TensorMode::tensor_2p5d:
      add(ParallelMode::tensor_2p5d_col, mesh.mask_of({"col"}));
      add(ParallelMode::tensor_2p5d_row, mesh.mask_of({"row"}));
      add(ParallelMode::tensor_2p5d_dep, mesh.mask_of({"dep"}));
      add(ParallelMode::tensor_2p5d_xz, mesh.mask_of({"col", "dep"}));
      break;
    case TensorMode::tensor_3d:
      add(ParallelMode::tensor_3d_input, mesh.mask_of({"j"}));
      add(ParallelMode::tensor_3d_weight, mesh.mask_of({"i"}));
      add(ParallelMode::tensor_3d_output, mesh.mask_of({"k"}));
      add(ParallelMode::tensor_3d_input_x_weight, mesh.mask_of({"i", "j"}));
      add(ParallelMode::tensor_3d_output_x_weight, mesh.mask_of({"i", "k"}));
      break;
  }
  return out;
}

}  // namespace pgroups
