#pragma once
// The one reader of config tables' values, shared by the parallel and mesh tables
// (parallel_table.cpp) and the cluster table (cluster_reader.cpp): how each format
// spells its types, and the messages of a wrong type, an unknown key or a number out of
// range, so that every table's message reads in the words of the file the user wrote
// (a TOML table, a JSON object, a Python dict). Internal to pgroups::config.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "pgroups/config/config_reader.hpp"
#include "value_tree.hpp"

namespace pgroups::detail {

/// How a format spells its types and literals.
struct FormatWords {
  std::string_view a_table;  ///< with its article: "a table", "an object", "a dict"
  std::string_view table;
  std::string_view an_array;  ///< "an array", "a list"
  std::string_view array;
  std::string_view null;  ///< empty where the format has no null (TOML)
  std::string_view true_literal;
  std::string_view false_literal;
  char quote;
};

[[nodiscard]] FormatWords words_for(ConfigFormat format) noexcept;

/// The base of each table's reader: what it found and how it fails, in `format`'s words,
/// every message starting "source:line:col:".
class TableReader {
 public:
  TableReader(ConfigFormat format, std::string_view source) noexcept;

 protected:
  /// "integer 3", "string \"x\"", "dict", "None", ... in the format's words.
  [[nodiscard]] std::string found(const ConfigValue& value) const;
  /// " or None" / " or null"; empty where the format has no null.
  [[nodiscard]] std::string or_null() const;
  /// ParseError "<path> must be <expected>, found <found(value)>".
  [[noreturn]] void wrong_type(const ConfigValue& value, std::string_view path, std::string_view expected) const;
  /// ParseError naming the key, the keys `path` has and the nearest of them.
  [[noreturn]] void unknown_key(const ConfigEntry& entry, std::string_view path,
                                std::span<const std::string_view> known) const;
  /// The value as a 64-bit integer, else ParseError: one too large for 64 bits, or
  /// another type (`expected` names what was wanted).
  [[nodiscard]] std::int64_t integer(const ConfigValue& value, std::string_view path,
                                     std::string_view expected = "an integer") const;
  /// The value as a finite number >= 0 (an integer or a float), else ParseError.
  [[nodiscard]] double non_negative_number(const ConfigValue& value, std::string_view path) const;
  [[noreturn]] void fail(SourcePosition position, std::string_view message) const;

  ConfigFormat format_;
  FormatWords words_;
  std::string_view source_;
};

}  // namespace pgroups::detail
