// A named mesh (ParallelConfig::mesh) lowered to its kinds: the dimension names and the
// group tokens checked, one kind per token.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "../common/did_you_mean.hpp"
#include "lowering.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups {
namespace {

using detail::find_dim;
using detail::printable;

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

void check_not_mixed(const ParallelConfig& c) {
  std::vector<std::string> mixed;
  if (c.pipeline != 1) mixed.push_back(fmt::format("pipeline={}", c.pipeline));
  if (c.tensor_size != 1) mixed.push_back(fmt::format("tensor={}", c.tensor_size));
  if (c.tensor_mode != TensorMode::none) mixed.push_back(fmt::format("mode={}", tensor_mode_name(c.tensor_mode)));
  if (c.depth) mixed.push_back(fmt::format("depth={}", *c.depth));
  if (c.legacy_sequence_dp) mixed.push_back("legacy_sequence_dp");
  if (!mixed.empty()) {
    throw ConfigError(
        fmt::format("a mesh cannot be combined with {}: the mesh's dimensions replace pipeline, tensor, "
                    "mode and depth",
                    fmt::join(mixed, ", ")));
  }
}

}  // namespace

// Dimension names are short ("tp", "dp"), where the general suggestion only forgives a
// change of case. Here one edit (or a swap of neighbours) is a plausible typo when it
// points at one name, preferring names with the same first letter ("tpp" -> "tp").
std::string detail::suggest_dim(std::string_view word, std::span<const std::string_view> names) {
  if (std::string suggestion = did_you_mean(word, names); !suggestion.empty()) return suggestion;
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

Layout::Lowered Layout::lower_mesh(const ParallelConfig& config) {
  check_not_mixed(config);
  const MeshConfig& mesh_config = *config.mesh;
  if (mesh_config.dims.empty()) throw ConfigError("a mesh needs at least one dimension, e.g. tp=2,dp=4");
  for (const MeshDim& dim : mesh_config.dims) check_dim_name(dim);
  Lowered out;
  out.config = config;
  out.mesh = Mesh(mesh_config.dims);
  const Mesh& mesh = out.mesh;
  if (config.world_size < 0) {
    throw ConfigError(fmt::format("world size {} is invalid: it must be a positive integer", config.world_size));
  }
  if (config.world_size != 0 && config.world_size != mesh.size()) {
    throw ConfigError(fmt::format("world size {} does not match the {}, whose sizes multiply to {}", config.world_size,
                                  describe(MeshConfig{mesh_config.dims, {}}), mesh.size()));
  }
  out.config.world_size = mesh.size();
  out.legacy_block_mesh = Mesh({{"member", mesh.size()}});
  auto size_of = [&mesh](std::string_view name) {
    const auto index = find_dim(mesh, name);
    return index ? mesh.dims()[*index].size : std::int64_t{1};
  };
  out.pipeline_dim = find_dim(mesh, "pp");
  std::string sizes;
  for (const MeshDim& dim : mesh.dims())
    sizes += fmt::format("{}{} {}", sizes.empty() ? "" : " x ", dim.name, dim.size);
  out.summary = fmt::format("{} (order {}, first fastest)", sizes, mesh_order(mesh_config));
  out.pipeline_size = size_of("pp");
  out.tensor_size = size_of("tp");
  out.data_parallel_size = size_of("dp");

  std::vector<std::string> tokens = mesh_config.groups;
  if (tokens.empty()) {
    for (const MeshDim& dim : mesh.dims()) tokens.push_back(dim.name);
  }
  std::vector<std::string_view> dim_names;
  for (const MeshDim& dim : mesh.dims()) dim_names.emplace_back(dim.name);
  for (const std::string& token : tokens) {
    KindShape shape;
    if (token == kEmbeddingGroup || token == kPositionEmbeddingGroup) {
      if (!out.pipeline_dim) {
        throw ConfigError(fmt::format("group '{}' needs a 'pp' dimension in the mesh, which has {}", printable(token),
                                      fmt::join(dim_names, ", ")));
      }
      shape.varying = mesh.mask_of({"pp"});
      shape.pick = token == kEmbeddingGroup ? KindShape::Pick::first_and_last : KindShape::Pick::first;
    } else {
      if (token.empty()) throw ConfigError("a group token is empty; write dimension names joined by '-', e.g. tp-dp");
      for (std::string_view part : split_group_token(token)) {
        if (part.empty()) {
          throw ConfigError(
              fmt::format("group '{}' has an empty dimension name; write names joined by one '-'", printable(token)));
        }
        const auto index = find_dim(mesh, part);
        if (!index) {
          std::string hint = detail::suggest_dim(part, dim_names);
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
    for (std::size_t k = 0; k < out.kinds.size(); ++k) {
      if (out.shapes[k].varying == shape.varying && out.shapes[k].pick == shape.pick) {
        throw ConfigError(fmt::format("group '{}' repeats group '{}': both vary the same dimensions", printable(token),
                                      printable(out.kinds[k].name)));
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
    out.add_kind(std::move(kind), shape);
  }
  return out;
}

}  // namespace pgroups
