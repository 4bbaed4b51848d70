#include "pgroups/layout/mesh_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pgroups/common/decimal_integer.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"

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
      throw ConfigError(fmt::format("mesh item {} in {} is not NAME=SIZE (e.g. tp=2,dp=4,pp=2)", quoted_excerpt(item),
                                    quoted_excerpt(spec)));
    }
    const std::string_view size_text = item.substr(equals + 1);
    // The one integer reader of the config files and the integer options: "010" and
    // "0x10" are refused in their words, never read in another base.
    const IntegerReading size = read_decimal_integer(size_text);
    if (size.status == IntegerStatus::leading_zero || size.status == IntegerStatus::not_decimal) {
      throw ConfigError(fmt::format("mesh item {} in {}: {}", quoted_excerpt(item), quoted_excerpt(spec),
                                    integer_problem(size, size_text, "")));
    }
    if (size.status != IntegerStatus::ok) {
      throw ConfigError(fmt::format("mesh item {} in {} has size {}, which is not a 64-bit integer",
                                    quoted_excerpt(item), quoted_excerpt(spec), quoted_excerpt(size_text)));
    }
    dims.push_back({std::string(item.substr(0, equals)), size.value});
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
      throw ConfigError(fmt::format(
          "size {}={} is given, but {} is not in the order {}; a name missing from the "
          "order must have size 1",
          printable_excerpt(given.name, 40), given.size, quoted_excerpt(given.name), quoted_excerpt(order)));
    }
  }
  return dims;
}

}  // namespace pgroups
