#include "pgroups/config/rank_map_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format_readers.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/layout/rank_map.hpp"

namespace pgroups {
namespace {

// Line and column of a byte offset, for JSON's byte positions.
std::string position_text(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("{}:{}", line, column);
}

std::string found(const nlohmann::json& value) {
  if (value.is_string()) return fmt::format("string {}", quoted_excerpt(value.get_ref<const std::string&>(), '"'));
  if (value.is_number_float()) return fmt::format("float {}", value.dump());
  if (value.is_number_unsigned()) return fmt::format("integer {} (beyond 64-bit signed)", value.dump());
  return fmt::format("{} {}", value.type_name(), printable_excerpt(value.dump(), 40));
}

}  // namespace

std::vector<std::int64_t> parse_rank_map(std::string_view text, std::string_view source) {
  nlohmann::json document;
  // A key given twice is refused, as the configuration files' JSON reader refuses it:
  // nlohmann would keep the last one silently, and the two readers would disagree.
  std::vector<std::string> top_keys;
  const auto refuse_duplicate_keys = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (std::find(top_keys.begin(), top_keys.end(), key) != top_keys.end()) {
        throw ParseError(fmt::format("{}: duplicate key {} in the rank map file's object: each key may be given once",
                                     source, quoted_excerpt(key, '\'')));
      }
      top_keys.push_back(key);
    }
    return true;
  };
  try {
    document = nlohmann::json::parse(text.begin(), text.end(), refuse_duplicate_keys);
  } catch (const nlohmann::json::parse_error& error) {
    throw ParseError(fmt::format("{}:{}: the rank map is not valid JSON ({})", source,
                                 position_text(text, error.byte > 0 ? error.byte - 1 : 0),
                                 printable_excerpt(error.what(), 200)));
  }
  const nlohmann::json* list = &document;
  if (document.is_object()) {
    const auto it = document.find("rank_map");
    if (it == document.end()) {
      throw ParseError(
          fmt::format("{}: the object has no rank_map key: a rank map file holds the list itself "
                      "([3, 0, 1, 2]) or an object with rank_map (as pgroups place --format json prints)",
                      source));
    }
    list = &*it;
  }
  if (!list->is_array()) {
    throw ParseError(
        fmt::format("{}: rank_map must be an array of integers, found {}: entry r is the launcher rank "
                    "that runs mesh rank r",
                    source, found(*list)));
  }
  if (list->empty()) throw ParseError(fmt::format("{}: rank_map {}", source, kEmptyRankMap));
  std::vector<std::int64_t> map;
  map.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& entry = (*list)[i];
    if (!entry.is_number_integer() || (entry.is_number_unsigned() && entry.get<std::uint64_t>() > INT64_MAX)) {
      throw ParseError(fmt::format("{}: rank_map[{}] must be an integer, found {}", source, i, found(entry)));
    }
    map.push_back(entry.get<std::int64_t>());
  }
  return map;
}

std::vector<std::int64_t> read_rank_map_file(const std::filesystem::path& path) {
  if (path.empty()) throw IoError("the rank map file path is empty: name a JSON file");
  const std::string text = detail::read_whole_file(path);
  return parse_rank_map(text, printable_excerpt(path.string(), 400));
}

}  // namespace pgroups
