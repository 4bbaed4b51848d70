#include "plan_output.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "output_file.hpp"
#include "pgroups/error.hpp"

namespace pgroups::cli {

nlohmann::json config_json(const ParallelConfig& config) {
  if (config.mesh) {
    nlohmann::json sizes = nlohmann::json::object();
    for (const MeshDim& dim : config.mesh->dims) sizes[dim.name] = dim.size;
    return {{"world_size", config.world_size},
            {"mesh", {{"order", mesh_order(*config.mesh)}, {"sizes", std::move(sizes)}}},
            {"groups", config.mesh->groups}};
  }
  nlohmann::json tensor = {{"size", config.tensor_size}};
  tensor["mode"] = config.tensor_mode == TensorMode::none ? nlohmann::json(nullptr)
                                                          : nlohmann::json(std::string(tensor_mode_name(config.tensor_mode)));
  if (config.tensor_mode == TensorMode::tensor_2p5d && config.depth) tensor["depth"] = *config.depth;
  nlohmann::json json = {{"world_size", config.world_size}, {"pipeline", config.pipeline}, {"tensor", tensor}};
  if (config.legacy_sequence_dp) json["legacy_sequence_dp"] = true;
  return json;
}

namespace {
// The "config" object of a layout: for a mesh, its groups are the kinds actually built
// (one per dimension when none were given).
nlohmann::json layout_config_json(const Layout& layout) {
  nlohmann::json json = config_json(layout.config());
  if (layout.is_mesh()) {
    json["groups"] = nlohmann::json::array();
    for (const GroupKind& kind : layout.group_kinds()) json["groups"].push_back(kind.name);
  }
  return json;
}
}  // namespace

nlohmann::json plan_json(const Layout& layout) {
  const std::int64_t w = layout.world_size();
  if (w > kMaxJsonWorldSize) {
    throw ConfigError(fmt::format("world size {} is too large for --format json (at most {} ranks are enumerated); "
                                  "use --format text, or `pgroups explain --rank R` for one rank",
                                  w, kMaxJsonWorldSize));
  }
  // Two values per rank and kind: a tree node each, and their text.
  check_output_estimate("the JSON plan", w, static_cast<std::int64_t>(layout.group_kinds().size()), kJsonBytesPerCell);
  nlohmann::json modes = nlohmann::json::object();
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    nlohmann::json local = nlohmann::json::array();
    nlohmann::json sizes = nlohmann::json::array();
    const std::int64_t size = layout.group_size(kind);
    const bool partial = layout.group_kinds()[kind].partial;
    for (std::int64_t rank = 0; rank < w; ++rank) {
      // A rank outside every group of a partial kind (embd) has neither.
      if (partial && !layout.is_member(rank, kind)) {
        local.push_back(nullptr);
        sizes.push_back(nullptr);
        continue;
      }
      local.push_back(layout.local_rank(rank, kind));
      sizes.push_back(size);
    }
    modes[layout.group_kinds()[kind].name] = {
        {"groups", layout.groups(kind)}, {"local_rank", std::move(local)}, {"world_size", std::move(sizes)}};
  }
  return {{"config", layout_config_json(layout)},
          {"data_parallel_size", layout.data_parallel_size()},
          {"modes", std::move(modes)}};
}

std::string elided_list(std::int64_t count, const std::function<std::int64_t(std::int64_t)>& member, std::int64_t keep) {
  std::string text = "[";
  auto append = [&](std::int64_t index) {
    if (text.size() > 1) text += ", ";
    text += std::to_string(member(index));
  };
  if (count <= 2 * keep + 1) {
    for (std::int64_t i = 0; i < count; ++i) append(i);
  } else {
    for (std::int64_t i = 0; i < keep; ++i) append(i);
    text += ", ...";
    for (std::int64_t i = count - keep; i < count; ++i) append(i);
  }
  return text + "]";
}

namespace {

std::string tensor_shape(const Layout& layout) {
  const ParallelConfig& c = layout.config();
  const std::int64_t q = layout.tensor_grid_dim();
  switch (c.tensor_mode) {
    case TensorMode::tensor_2d: return fmt::format("2d, q={}", q);
    case TensorMode::tensor_2p5d: return fmt::format("2.5d, q={}, depth={}", q, *c.depth);
    case TensorMode::tensor_3d: return fmt::format("3d, depth={}", q);
    default: return std::string(tensor_mode_name(c.tensor_mode));
  }
}

constexpr std::int64_t kGroupsShown = 6;

}  // namespace

namespace {

std::size_t name_width(const Layout& layout) {
  std::size_t width = 20;
  for (const GroupKind& kind : layout.group_kinds()) width = std::max(width, kind.name.size());
  return width;
}

std::string mesh_shape(const Layout& layout) {
  std::string text;
  for (const MeshDim& dim : layout.config().mesh->dims) {
    text += fmt::format("{}{} {}", text.empty() ? "" : " x ", dim.name, dim.size);
  }
  return fmt::format("world size {} = {} (order {}, first fastest)\n", layout.world_size(), text,
                     mesh_order(*layout.config().mesh));
}

std::string partial_note(const Layout& layout) {
  std::string out;
  for (const GroupKind& kind : layout.group_kinds()) {
    if (!kind.partial) continue;
    out += kind.name == kEmbeddingGroup
               ? fmt::format("{}: the first and last rank of each pp group (Megatron's embedding group)\n", kind.name)
               : fmt::format("{}: the first rank of each pp group (Megatron's position-embedding group)\n", kind.name);
  }
  return out;
}

}  // namespace

std::string plan_text(const Layout& layout) {
  std::string out;
  if (layout.is_mesh()) {
    out = mesh_shape(layout) + partial_note(layout);
  } else {
    out = fmt::format("world size {} = data {} x pipeline {} x tensor {} ({})\n", layout.world_size(),
                      layout.data_parallel_size(), layout.pipeline_size(), layout.tensor_size(), tensor_shape(layout));
  }
  if (layout.has_mode(ParallelMode::sequence_dp)) {
    out += layout.config().legacy_sequence_dp
               ? "sequence_dp: Colossal-AI's contiguous blocks of W/pipeline ranks (--legacy-sequence-dp)\n"
               : "sequence_dp: all ranks of one pipeline stage (docs/spec.md §3; --legacy-sequence-dp for Colossal-AI's blocks)\n";
  }
  const std::size_t width = name_width(layout);
  out += fmt::format("\n{:<{}} {:>10} {:>10}  groups (ascending by first rank)\n", layout.is_mesh() ? "group" : "mode",
                     width, "groups", "size");
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    const std::int64_t count = layout.group_count(kind);
    const std::int64_t size = layout.group_size(kind);
    auto group_text = [&](std::int64_t g) {
      const std::int64_t leader = layout.group_leader(kind, g);
      return elided_list(size, [&](std::int64_t i) { return layout.group_member(leader, kind, i); });
    };
    out += fmt::format("{:<{}} {:>10} {:>10}  {}\n", layout.group_kinds()[kind].name, width, count, size, group_text(0));
    // Eliding a single group would save nothing: show up to kGroupsShown + 2 in full.
    const std::int64_t shown = count <= kGroupsShown + 2 ? count : kGroupsShown;
    const std::size_t indent = width + 23;
    for (std::int64_t g = 1; g < shown; ++g) out += fmt::format("{:<{}}  {}\n", "", indent, group_text(g));
    if (count > shown) {
      out += fmt::format("{:<{}}  ... {} more\n", "", indent, count - shown - 1);
      out += fmt::format("{:<{}}  {}\n", "", indent, group_text(count - 1));
    }
  }
  return out;
}

std::string explain_text(const Layout& layout, std::int64_t rank) {
  std::string coords;
  for (const Coordinate& c : layout.coordinates(rank)) {
    coords += fmt::format("{}{}={}/{}", coords.empty() ? "" : " ", c.name, c.value, c.size);
  }
  const std::size_t width = name_width(layout);
  std::string out = fmt::format("rank {} of {} ({})\ncoordinates: {}\n\n{:<{}} {:>12} {:>12}  group\n", rank,
                                layout.world_size(), describe(layout.config()), coords,
                                layout.is_mesh() ? "group" : "mode", width, "local rank", "size");
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    const std::string& name = layout.group_kinds()[kind].name;
    if (!layout.is_member(rank, kind)) {
      out += fmt::format("{:<{}} {:>12} {:>12}  not a member\n", name, width, "-", "-");
      continue;
    }
    const std::int64_t size = layout.group_size(kind);
    out += fmt::format("{:<{}} {:>12} {:>12}  {}\n", name, width, layout.local_rank(rank, kind), size,
                       elided_list(size, [&](std::int64_t i) { return layout.group_member(rank, kind, i); }));
  }
  return out;
}

nlohmann::json explain_json(const Layout& layout, std::int64_t rank) {
  constexpr std::int64_t kMembersKept = 32;
  nlohmann::json coords = nlohmann::json::object();
  for (const Coordinate& c : layout.coordinates(rank)) coords[c.name] = c.value;
  nlohmann::json modes = nlohmann::json::object();
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    const std::string& name = layout.group_kinds()[kind].name;
    if (!layout.is_member(rank, kind)) {
      modes[name] = {{"member", false}};
      continue;
    }
    const std::int64_t size = layout.group_size(kind);
    nlohmann::json entry = {{"local_rank", layout.local_rank(rank, kind)},
                            {"world_size", size},
                            {"group_index", layout.group_index(rank, kind)}};
    auto members = [&](std::int64_t from, std::int64_t to) {
      nlohmann::json list = nlohmann::json::array();
      for (std::int64_t i = from; i < to; ++i) list.push_back(layout.group_member(rank, kind, i));
      return list;
    };
    if (size <= 2 * kMembersKept) {
      entry["group"] = members(0, size);
    } else {
      entry["group_first"] = members(0, kMembersKept);
      entry["group_last"] = members(size - kMembersKept, size);
    }
    modes[name] = std::move(entry);
  }
  return {{"rank", rank}, {"config", layout_config_json(layout)}, {"coordinates", coords}, {"modes", modes}};
}

}  // namespace pgroups::cli
