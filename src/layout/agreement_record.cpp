#include "pgroups/layout/agreement_record.hpp"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <optional>
#include <string>

#include "pgroups/common/digest.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups {
namespace {

// The first field of an error record: no settings field is named so (names come from
// code, and a '!' starts none of them).
constexpr std::string_view kErrorField = "!error";

void append_sized(std::string& out, std::string_view bytes) {
  out += std::to_string(bytes.size());
  out += ':';
  out += bytes;
}

// Reads one "<n>:<bytes>" at `at`; nullopt when `text` is not of that form there.
std::optional<std::string_view> read_sized(std::string_view text, std::size_t& at) {
  std::size_t length = 0;
  const char* begin = text.data() + at;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(begin, end, length);
  if (error != std::errc() || stop == end || *stop != ':') return std::nullopt;
  const std::size_t start = static_cast<std::size_t>(stop - text.data()) + 1;
  if (length > text.size() - start) return std::nullopt;
  at = start + length;
  return text.substr(start, length);
}

std::optional<std::vector<std::pair<std::string_view, std::string_view>>> decode(std::string_view record) {
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  std::size_t at = 0;
  while (at < record.size()) {
    const auto name = read_sized(record, at);
    if (!name || at >= record.size()) return std::nullopt;
    const auto value = read_sized(record, at);
    if (!value) return std::nullopt;
    fields.emplace_back(*name, *value);
  }
  return fields;
}

[[noreturn]] void throw_carried(const std::string& kind, const std::string& message) {
  if (kind == "ConfigError") throw ConfigError(message);
  if (kind == "ParseError") throw ParseError(message);
  if (kind == "IoError") throw IoError(message);
  if (kind == "BackendError") throw BackendError(message);
  if (kind == "MismatchError") throw MismatchError(message);
  if (kind == "TimeoutError") throw TimeoutError(message);
  if (kind == "StateError") throw StateError(message);
  throw CarriedError(kind, message);
}

}  // namespace

std::string encode_settings(std::span<const SettingField> fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    append_sized(out, name);
    append_sized(out, value);
  }
  return out;
}

std::string encode_error(std::string_view kind, std::string_view message) {
  std::string out;
  append_sized(out, kErrorField);
  append_sized(out, kind);
  append_sized(out, "message");
  append_sized(out, message);
  return out;
}

bool is_error_record(std::string_view record) noexcept {
  // append_sized's form of kErrorField, the cheap test first.
  if (!record.starts_with("6:!error")) return false;
  try {
    const auto fields = decode(record);
    return fields && fields->size() == 2 && (*fields)[0].first == kErrorField && (*fields)[1].first == "message";
  } catch (...) {
    return false;
  }
}

std::uint64_t settings_digest(std::string_view record) noexcept { return text_digest(record); }

std::string record_text(std::string_view record) {
  const auto fields = decode(record);
  if (!fields || fields->empty()) return std::string(record);
  std::string text;
  for (const auto& [name, value] : *fields) {
    if (name == "text") return std::string(value);
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value);
  }
  return text;
}

void judge_records(std::span<const std::string> records, std::string_view what) {
  // Variants in order of the first rank holding them.
  std::vector<std::string_view> variants;
  std::map<std::string_view, std::vector<int>> holders;
  bool carries_error = false;
  for (std::size_t r = 0; r < records.size(); ++r) {
    auto [it, inserted] = holders.try_emplace(records[r]);
    if (inserted) variants.push_back(records[r]);
    it->second.push_back(static_cast<int>(r));
    carries_error = carries_error || is_error_record(records[r]);
  }
  if (!carries_error && variants.size() <= 1) return;
  constexpr std::size_t kShown = 8;
  const auto ranks_text = [&](std::string_view variant) {
    const std::vector<int>& ranks = holders[variant];
    return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", rank_list(ranks));
  };
  if (carries_error) {
    std::string kind;
    std::string detail;
    std::size_t shown = 0;
    for (std::string_view variant : variants) {
      if (!is_error_record(variant)) continue;
      const auto fields = decode(variant);
      if (kind.empty()) kind = std::string((*fields)[0].second);
      if (shown++ < kShown) {
        detail += fmt::format("{}{} hit before the {} agreement: {}", detail.empty() ? "" : "; ", ranks_text(variant),
                              what, (*fields)[1].second);
      }
    }
    if (shown > kShown) detail += fmt::format("; and {} more errors", shown - kShown);
    throw_carried(kind, detail);
  }
  std::string detail;
  for (std::size_t i = 0; i < variants.size() && i < kShown; ++i) {
    const std::size_t count = holders[variants[i]].size();
    detail += fmt::format("{}{} {} '{}'", i == 0 ? "" : "; ", ranks_text(variants[i]), count == 1 ? "holds" : "hold",
                          record_text(variants[i]));
  }
  if (variants.size() > kShown) detail += fmt::format("; and {} more variants", variants.size() - kShown);
  throw MismatchError(fmt::format("{} mismatch across {} ranks: {}", what, records.size(), detail));
}

}  // namespace pgroups
