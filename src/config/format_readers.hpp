#pragma once
// One reader per format, each turning text into the neutral value tree (value_tree.hpp);
// parallel_table.hpp then reads the settings from it. Internal to pgroups::config.

#include <string_view>

#include "value_tree.hpp"

namespace pgroups::detail {

/// TOML 1.0 through toml++, after a linear scan that rejects nesting (brackets and
/// dotted keys together) deeper than kMaxNesting, since toml++ recurses on dotted keys
/// without a bound. Throws ParseError "source:line:col: ...".
[[nodiscard]] ConfigValue read_toml_tree(std::string_view text, std::string_view source);

/// Strict JSON (RFC 8259, no comments) through nlohmann-json's iterative SAX parser; no
/// DOM is built. Throws ParseError "source:line:col: ...".
[[nodiscard]] ConfigValue read_json_tree(std::string_view text, std::string_view source);

/// The Python literal subset of python_literal_parser.hpp; the top level is a table of
/// the assigned names.
[[nodiscard]] ConfigValue read_python_tree(std::string_view text, std::string_view source);

}  // namespace pgroups::detail
