#pragma once
/// \file
/// docs/reference/spec.md §4's "config" object: the one rendering of a configuration that the plan and
/// explain JSON, the CLI and Python's Plan.config share.

#include <nlohmann/json.hpp>

#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_config.hpp"

namespace pgroups {

/// {"world_size", "pipeline", "tensor": {"size", "mode", "depth" (2.5d only)}} for presets
/// (plus "legacy_sequence_dp": true when set); {"world_size", "mesh": {"order", "sizes"},
/// "groups"} for a mesh, its groups as written (empty: one per dimension). O(dimensions +
/// groups); throws nothing.
[[nodiscard]] nlohmann::json config_json(const ParallelConfig& config);

/// config_json(layout.config()), except that a mesh's "groups" are the kinds the layout
/// actually built (one per dimension when none were given): what a plan shows.
[[nodiscard]] nlohmann::json config_json(const Layout& layout);

}  // namespace pgroups
