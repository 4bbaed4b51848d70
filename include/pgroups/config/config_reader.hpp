#pragma once
/// \file
/// Readers that turn configuration text into a ParallelConfig, and nothing else. Three
/// formats carry the same settings (docs/reference/spec.md §1):
///
///   TOML     [parallel]
///            pipeline = 2
///            tensor = { size = 4, mode = "2d" }
///   JSON     {"parallel": {"pipeline": 2, "tensor": {"size": 4, "mode": "2d"}}}
///   Python   parallel = dict(pipeline=2, tensor=dict(size=4, mode='2d'))
///
/// The `parallel` table holds `pipeline` (an integer or {size = N}), `tensor` (an integer
/// or {size, mode, depth}), and pgroups' own optional keys `world_size`,
/// `legacy_sequence_dp` (boolean), `seed` and `gpus_per_node` (for the locality report;
/// checked where it is used, pgroups/layout/locality.hpp). A table must give its `size` (as in
/// Colossal-AI); `mode` and `depth` may be null/None (no mode, no depth). A TOML or JSON
/// file holds `parallel` and `mesh` only: another top-level key is a ParseError naming the
/// first in the file (`world_size` above `[parallel]` is one in TOML). A Python file keeps
/// its other top-level entries, as a training config holds many; there no `parallel`
/// entry means the defaults (pure data parallelism), unless a top-level key looks like a
/// misspelling of it (`parallell`, `Parallel`): that is a ParseError suggesting
/// `parallel`. An unknown key inside `parallel` is an error that suggests the closest
/// known key, and so is a key given twice. An empty or blank text is a ParseError, as it is far
/// more likely a truncated file than a wish. Python lines end at \n, \r\n or a lone \r.
/// Integers are decimal (docs/reference/errors.md, "Input rules"); a TOML file holds at most
/// 10,000 values, so that reading stays within a few times the text's size.
///
/// A top-level `mesh` table describes a named mesh instead (ParallelConfig::mesh;
/// docs/using/meshes.md): `order` (required; dimension names joined by '-', fastest first),
/// `groups` (an array of group tokens; default one per dimension), and every other key
/// the integer size of the dimension it names (1 when absent; a name missing from the
/// order must have size 1):
///
///   TOML     [mesh]
///            order = "tp-cp-dp-pp"
///            tp = 2
///            dp = 4
///            groups = ["tp", "dp-cp", "embd"]
///   JSON     {"mesh": {"order": "tp-cp-dp-pp", "tp": 2, "dp": 4, "groups": ["tp", "dp-cp"]}}
///   Python   mesh = dict(order='tp-cp-dp-pp', tp=2, dp=4, groups=['tp', 'dp-cp'])
///
/// `world_size` stays in `parallel`. At most 64 keys and 64 groups are read; more is a
/// ParseError.
///
/// Python files are read as a literal subset, never executed: assignments of integers,
/// floats, strings, True/False/None, `dict(...)` calls with keyword arguments, `{...}`
/// literals with string keys and `[...]` lists, plus comments, docstrings and lines
/// joined inside brackets. Any other construct (import, any other call, attribute
/// access, names, operators, lambda, f-strings, ...) is a ParseError with its line and
/// column that names what was found.
///
/// All readers throw ParseError (syntax, unknown key, wrong type, an integer outside
/// int64) or ConfigError (a tensor mode that does not exist) whose message starts with
/// "source:line:column:" where the position is known; they do not check the layout
/// rules (Layout does). Untrusted input is safe: nesting deeper than 64 levels is a
/// ParseError raised before any recursive parser sees it, NUL bytes and invalid UTF-8
/// are ParseErrors, quoted text in messages is escaped and cut, memory stays linear in
/// the input and time linear or close to it.

#include <filesystem>
#include <optional>
#include <string_view>

#include "pgroups/layout/parallel_config.hpp"

namespace pgroups {

enum class ConfigFormat : std::uint8_t { toml, json, python };

/// ".toml", ".json" or ".py"; nothing for any other extension.
[[nodiscard]] std::optional<ConfigFormat> config_format_from_path(const std::filesystem::path& path);

/// Reads `text` in `format`; `source` names it in error messages. Throws ParseError or
/// ConfigError as above.
[[nodiscard]] ParallelConfig parse_config(std::string_view text, ConfigFormat format,
                                          std::string_view source = "<config>");

/// Reads a file, its format given by its extension (ParseError for an unknown one, which
/// lists the known ones); messages name the path, escaped, as their source. Throws
/// IoError for an empty path or one holding a NUL byte (the system would read another
/// file), and naming the path for a file that is missing, a directory, not a regular
/// file (a FIFO or a device would block or never end), unreadable, or larger than 64 MiB.
[[nodiscard]] ParallelConfig read_config_file(const std::filesystem::path& path);

}  // namespace pgroups
