#pragma once
/// \file
/// Readers that turn configuration text into a ParallelConfig, and nothing else. Three
/// formats carry the same settings (SPEC §1):
///
///   TOML     [parallel]
///            pipeline = 2
///            tensor = { size = 4, mode = "2d" }
///   JSON     {"parallel": {"pipeline": 2, "tensor": {"size": 4, "mode": "2d"}}}
///   Python   parallel = dict(pipeline=2, tensor=dict(size=4, mode='2d'))
///
/// The `parallel` table holds `pipeline` (an integer or {size = N}), `tensor` (an integer
/// or {size, mode, depth}), and pgroups' own optional keys `world_size`,
/// `legacy_sequence_dp` (boolean) and `seed`. Other top-level entries are ignored, as a
/// training config holds many; an unknown key inside `parallel` is an error that
/// suggests the closest known key. No `parallel` entry means the defaults (pure data
/// parallelism).
///
/// Python files are read as a literal subset, never executed: assignments of ints,
/// strings, booleans, None, `dict(...)` calls and `{...}` literals, and comments. Any
/// other construct is a ParseError with its line and column.
///
/// All readers throw ParseError (syntax, unknown key, wrong type) or ConfigError (a
/// value that can never be valid, such as a tensor mode that does not exist) whose
/// message starts with "source:line:column:" where the position is known; they do not
/// check the layout rules (Layout does). File readers throw IoError for a missing,
/// unreadable or non-regular file, naming the path.

#include <filesystem>
#include <optional>
#include <string_view>

#include "pgroups/parallel_config.hpp"

namespace pgroups {

enum class ConfigFormat : std::uint8_t { toml, json, python };

/// ".toml", ".json" or ".py"; nothing for any other extension.
[[nodiscard]] std::optional<ConfigFormat> config_format_from_path(const std::filesystem::path& path);

/// Reads `text` in `format`; `source` names it in error messages.
[[nodiscard]] ParallelConfig parse_config(std::string_view text, ConfigFormat format,
                                          std::string_view source = "<config>");

/// Reads a file, its format given by its extension (ParseError for an unknown one).
[[nodiscard]] ParallelConfig read_config_file(const std::filesystem::path& path);

}  // namespace pgroups
