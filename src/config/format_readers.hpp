#pragma once
// One reader per format, each turning text into the neutral value tree (value_tree.hpp);
// parallel_table.hpp then reads the settings from it. Internal to pgroups::config.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "value_tree.hpp"

namespace pgroups::detail {

/// The most values, tables and keys a TOML configuration may hold (each '=', ',', '[',
/// '{', table header and key dot outside strings and comments counts one).
inline constexpr std::size_t kMaxTomlValues = 10'000;

/// TOML 1.0 through toml++, after a linear scan that rejects nesting (brackets and
/// dotted keys together) deeper than kMaxNesting, since toml++ recurses on dotted keys
/// without a bound, and more than kMaxTomlValues values, since toml++ builds the whole
/// document (so its memory stays within a few times the text's size plus a constant).
/// Throws ParseError "source:line:col: ...".
[[nodiscard]] ConfigValue read_toml_tree(std::string_view text, std::string_view source);

/// Strict JSON (RFC 8259, no comments) through nlohmann-json's iterative SAX parser; no
/// DOM is built. Throws ParseError "source:line:col: ...".
[[nodiscard]] ConfigValue read_json_tree(std::string_view text, std::string_view source);

/// The Python literal subset of python_literal_parser.hpp; the top level is a table of
/// the assigned names.
[[nodiscard]] ConfigValue read_python_tree(std::string_view text, std::string_view source);

/// A file's whole text, with read_config_file's checks and IoErrors (at most 64 MiB).
[[nodiscard]] std::string read_whole_file(const std::filesystem::path& path);

/// A .toml, .json or .py file's value tree; `source` is set to the name messages give it.
[[nodiscard]] ConfigValue read_tree_file(const std::filesystem::path& path, std::string& source);

}  // namespace pgroups::detail
