#include "plan_output.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "pgroups/error.hpp"

namespace pgroups::cli {

nlohmann::json config_json(const ParallelConfig& config) {
  nlohmann::json tensor = {{"size", config.tensor_size}};
  tensor["mode"] = config.tensor_mode == TensorMode::none ? nlohmann::json(nullptr)
                                                          : nlohmann::json(std::string(tensor_mode_name(config.tensor_mode)));
  if (config.tensor_mode == TensorMode::tensor_2p5d && config.depth) tensor["depth"] = *config.depth;
  nlohmann::json json = {{"world_size", config.world_size}, {"pipeline", config.pipeline}, {"tensor", tensor}};
  if (config.legacy_sequence_dp) json["legacy_sequence_dp"] = true;
  return json;
}

nlohmann::json plan_json(const Layout& layout) {
  const std::int64_t w = layout.world_size();
  if (w > kMaxJsonWorldSize) {
    throw ConfigError(fmt::format("world size {} is too large for --format json (at most {} ranks are enumerated); "
                                  "use --format text, or `pgroups explain --rank R` for one rank",
                                  w, kMaxJsonWorldSize));
  }
  nlohmann::json modes = nlohmann::json::object();
  for (ParallelMode mode : layout.modes()) {
    nlohmann::json local = nlohmann::json::array();
    nlohmann::json sizes = nlohmann::json::array();
    const std::int64_t size = layout.group_size(mode);
    for (std::int64_t rank = 0; rank < w; ++rank) {
      local.push_back(layout.local_rank(rank, mode));
      sizes.push_back(size);
    }
    modes[std::string(mode_name(mode))] = {{"groups", layout.groups(mode)}, {"local_rank", std::move(local)},
                                            {"world_size", std::move(sizes)}};
  }
  return {{"config", config_json(layout.config())},
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

std::string plan_text(const Layout& layout) {
  std::string out = fmt::format("world size {} = data {} x pipeline {} x tensor {} ({})\n", layout.world_size(),
                                layout.data_parallel_size(), layout.pipeline_size(), layout.tensor_size(),
                                tensor_shape(layout));
  if (layout.has_mode(ParallelMode::sequence_dp)) {
    out += layout.config().legacy_sequence_dp
               ? "sequence_dp: Colossal-AI's contiguous blocks of W/pipeline ranks (--legacy-sequence-dp)\n"
               : "sequence_dp: all ranks of one pipeline stage (docs/spec.md §3; --legacy-sequence-dp for Colossal-AI's blocks)\n";
  }
  out += fmt::format("\n{:<20} {:>10} {:>10}  groups (ascending by first rank)\n", "mode", "groups", "size");
  for (ParallelMode mode : layout.modes()) {
    const std::int64_t count = layout.group_count(mode);
    const std::int64_t size = layout.group_size(mode);
    auto group_text = [&](std::int64_t g) {
      const std::int64_t leader = layout.group_leader(mode, g);
      return elided_list(size, [&](std::int64_t i) { return layout.group_member(leader, mode, i); });
    };
    out += fmt::format("{:<20} {:>10} {:>10}  {}\n", mode_name(mode), count, size, group_text(0));
    // Eliding a single group would save nothing: show up to kGroupsShown + 2 in full.
    const std::int64_t shown = count <= kGroupsShown + 2 ? count : kGroupsShown;
    for (std::int64_t g = 1; g < shown; ++g) out += fmt::format("{:<43}  {}\n", "", group_text(g));
    if (count > shown) {
      out += fmt::format("{:<43}  ... {} more\n", "", count - shown - 1);
      out += fmt::format("{:<43}  {}\n", "", group_text(count - 1));
    }
  }
  return out;
}

std::string explain_text(const Layout& layout, std::int64_t rank) {
  std::string coords;
  for (const Coordinate& c : layout.coordinates(rank)) {
    coords += fmt::format("{}{}={}/{}", coords.empty() ? "" : " ", c.name, c.value, c.size);
  }
  std::string out = fmt::format("rank {} of {} ({})\ncoordinates: {}\n\n{:<20} {:>12} {:>12}  group\n", rank,
                                layout.world_size(), describe(layout.config()), coords, "mode", "local rank", "size");
  for (ParallelMode mode : layout.modes()) {
    const std::int64_t size = layout.group_size(mode);
    out += fmt::format("{:<20} {:>12} {:>12}  {}\n", mode_name(mode), layout.local_rank(rank, mode), size,
                       elided_list(size, [&](std::int64_t i) { return layout.group_member(rank, mode, i); }));
  }
  return out;
}

nlohmann::json explain_json(const Layout& layout, std::int64_t rank) {
  constexpr std::int64_t kMembersKept = 32;
  nlohmann::json coords = nlohmann::json::object();
  for (const Coordinate& c : layout.coordinates(rank)) coords[c.name] = c.value;
  nlohmann::json modes = nlohmann::json::object();
  for (ParallelMode mode : layout.modes()) {
    const std::int64_t size = layout.group_size(mode);
    nlohmann::json entry = {{"local_rank", layout.local_rank(rank, mode)},
                            {"world_size", size},
                            {"group_index", layout.group_index(rank, mode)}};
    auto members = [&](std::int64_t from, std::int64_t to) {
      nlohmann::json list = nlohmann::json::array();
      for (std::int64_t i = from; i < to; ++i) list.push_back(layout.group_member(rank, mode, i));
      return list;
    };
    if (size <= 2 * kMembersKept) {
      entry["group"] = members(0, size);
    } else {
      entry["group_first"] = members(0, kMembersKept);
      entry["group_last"] = members(size - kMembersKept, size);
    }
    modes[std::string(mode_name(mode))] = std::move(entry);
  }
  return {{"rank", rank}, {"config", config_json(layout.config())}, {"coordinates", coords}, {"modes", modes}};
}

}  // namespace pgroups::cli
