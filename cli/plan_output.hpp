#pragma once
// How plans are shown: docs/spec.md §4's JSON, and text with large groups and long group lists
// elided so that a plan of any size prints in bounded time.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "pgroups/layout.hpp"

namespace pgroups::cli {

/// Largest world that `--format json` enumerates: the output holds O(W * modes) numbers.
inline constexpr std::int64_t kMaxJsonWorldSize = std::int64_t{1} << 22;
/// What one rank in one kind costs a JSON plan while it is built: two values of the tree
/// (16 bytes each, and their arrays' slack) and their text. W x kinds x this is checked
/// against kMaxOutputBytes (output_file.hpp) before the tree is allocated.
inline constexpr std::int64_t kJsonBytesPerCell = 64;

/// docs/spec.md §4's "config" object; for a mesh {"world_size", "mesh": {"order", "sizes"}, "groups"}.
[[nodiscard]] nlohmann::json config_json(const ParallelConfig& config);

/// The whole plan in docs/spec.md §4's schema, "modes" keyed by group kind (a mesh's tokens as
/// given); a rank outside a partial kind (embd) has null local_rank and world_size.
/// Throws ConfigError above kMaxJsonWorldSize, or when W x kinds x kJsonBytesPerCell is
/// above kMaxOutputBytes.
[[nodiscard]] nlohmann::json plan_json(const Layout& layout);

/// "[0, 1, 2, ..., 14, 15]": members by position, the middle elided past `keep` * 2.
[[nodiscard]] std::string elided_list(std::int64_t count, const std::function<std::int64_t(std::int64_t)>& member,
                                      std::int64_t keep = 4);

/// The plan as text: sizes, then per mode its group count, size and groups.
[[nodiscard]] std::string plan_text(const Layout& layout);

/// One rank's picture as text: coordinates, then per mode local rank, size and group.
[[nodiscard]] std::string explain_text(const Layout& layout, std::int64_t rank);

/// The same as JSON: {"rank", "config", "coordinates", "modes": {name: {local_rank,
/// world_size, group_index, group (elided past 64 members as first/last 32)}}}.
[[nodiscard]] nlohmann::json explain_json(const Layout& layout, std::int64_t rank);

}  // namespace pgroups::cli
