#include "pgroups/mesh_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>

#include "pgroups/error.hpp"

namespace pgroups {

std::string mesh_order(const MeshConfig& mesh) {
  std::vector<std::string_view> names;
  names.reserve(mesh.dims.size());
  for (const MeshDim& dim : mesh.dims) names.emplace_back(dim.name);
  return fmt::format("{}", fmt::join(names, "-"));
}

std::string describe(const MeshConfig& mesh) {
  std::vector<std::string> sizes;
  sizes.reserve(mesh.dims.size());
  for (const MeshDim& dim : mesh.dims) sizes.push_back(fmt::format("{}={}", dim.name, dim.size));
  std::string text = fmt::format("mesh {}", fmt::join(sizes, ","));
  if (!mesh.groups.empty()) text += fmt::format(" groups {}", fmt::join(mesh.groups, ","));
  return text;
}

std::vector<std::string_view> split_group_token(std::string_view token) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t dash = token.find('-');
    parts.push_back(token.substr(0, dash));
    if (dash == std::string_view::npos) return parts;
    token.remove_prefix(dash + 1);
  }
}

std::vector<MeshDim> parse_mesh_dims(std::string_view spec) {
  std::vector<MeshDim> dims;
  std::string_view rest = spec;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      throw ConfigError(fmt::format("mesh item '{}' in '{}' is not NAME=SIZE (e.g. tp=2,dp=4,pp=2)", item, spec));
    }
    const std::string_view size_text = item.substr(equals + 1);
    std::int64_t size = 0;
    const auto [end, error] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
    if (size_text.empty() || error != std::errc() || end != size_text.data() + size_text.size()) {
      throw ConfigError(
          fmt::format("mesh item '{}' in '{}' has size '{}', which is not a 64-bit integer", item, spec, size_text));
    }
    dims.push_back({std::string(item.substr(0, equals)), size});
    if (comma == std::string_view::npos) return dims;
    rest.remove_prefix(comma + 1);
  }
}

std::vector<MeshDim> mesh_dims_from_order(std::string_view order, std::span<const MeshDim> sizes) {
  std::vector<MeshDim> dims;
  for (std::string_view name : split_group_token(order)) dims.push_back({std::string(name), 1});
  for (const MeshDim& given : sizes) {
    bool found = false;
    for (MeshDim& dim : dims) {
      if (dim.name == given.name) {
        dim.size = given.size;
        found = true;
      }
    }
    if (!found && given.size != 1) {
      throw ConfigError(fmt::format("size {}={} is given, but '{}' is not in the order '{}'; a name missing from the "
                                    "order must have size 1",
                                    given.name, given.size, given.name, order));
    }
  }
  return dims;
}

}  // namespace pgroups
