#include "table_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "../common/did_you_mean.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups::detail {

FormatWords words_for(ConfigFormat format) noexcept {
  switch (format) {
    case ConfigFormat::toml: return {"a table", "table", "an array", "array", "", "true", "false", '"'};
    case ConfigFormat::json: return {"an object", "object", "an array", "array", "null", "true", "false", '"'};
    case ConfigFormat::python: break;
  }
  return {"a dict", "dict", "a list", "list", "None", "True", "False", '\''};
}

TableReader::TableReader(ConfigFormat format, std::string_view source) noexcept
    : format_(format), words_(words_for(format)), source_(source) {}

std::string TableReader::found(const ConfigValue& value) const {
  // Integers of any length are shown in full up to a point; a million digits are not.
  switch (value.kind) {
    case ValueKind::null: return std::string(words_.null);
    case ValueKind::boolean:
      return fmt::format("boolean {}", value.boolean ? words_.true_literal : words_.false_literal);
    case ValueKind::integer: return fmt::format("integer {}", value.integer);
    case ValueKind::big_integer: return fmt::format("integer {}", printable_excerpt(value.text, 40));
    case ValueKind::floating: return fmt::format("float {}", printable_excerpt(value.text, 40));
    case ValueKind::string: return fmt::format("string {}", quoted_excerpt(value.text, words_.quote));
    case ValueKind::array: return std::string(words_.array);
    case ValueKind::table: return std::string(words_.table);
    case ValueKind::date_time: return "date-time";
  }
  return "value";
}

std::string TableReader::or_null() const {
  return words_.null.empty() ? std::string() : fmt::format(" or {}", words_.null);
}

void TableReader::wrong_type(const ConfigValue& value, std::string_view path, std::string_view expected) const {
  fail(value.position, fmt::format("{} must be {}, found {}", path, expected, found(value)));
}

void TableReader::unknown_key(const ConfigEntry& entry, std::string_view path,
                              std::span<const std::string_view> known) const {
  const std::string keys = known.size() == 1 ? fmt::format("the only key is {}", known.front())
                                             : fmt::format("the keys are {}", fmt::join(known, ", "));
  fail(entry.key_position, fmt::format("unknown key {} in {}; {}{}", quoted_excerpt(entry.key), path, keys,
                                       did_you_mean(entry.key, known)));
}

std::int64_t TableReader::integer(const ConfigValue& value, std::string_view path, std::string_view expected) const {
  if (value.kind == ValueKind::integer) return value.integer;
  if (value.kind == ValueKind::big_integer) {
    fail(value.position,
         fmt::format("{} {} does not fit in a 64-bit integer", path, printable_excerpt(value.text, 40)));
  }
  wrong_type(value, path, expected);
}

double TableReader::non_negative_number(const ConfigValue& value, std::string_view path) const {
  double result = 0;
  if (value.kind == ValueKind::integer) {
    result = static_cast<double>(value.integer);
  } else if (value.kind == ValueKind::floating) {
    errno = 0;
    char* end = nullptr;
    result = std::strtod(value.text.c_str(), &end);
    if (end == value.text.c_str()) {
      fail(value.position, fmt::format("{} {} is not a number", path, printable_excerpt(value.text, 40)));
    }
  } else {
    wrong_type(value, path, "a number");
  }
  if (!std::isfinite(result) || result < 0) {
    fail(value.position,
         fmt::format("{} {} is invalid: it must be a finite number >= 0", path,
                     printable_excerpt(value.text.empty() ? std::to_string(value.integer) : value.text, 40)));
  }
  return result;
}

void TableReader::fail(SourcePosition position, std::string_view message) const {
  throw_parse_error(source_, position, message);
}

}  // namespace pgroups::detail
