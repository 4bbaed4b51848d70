#include "pgroups/common/environment.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "pgroups/common/printable.hpp"

namespace pgroups {

std::optional<std::string> process_environment(std::string_view name) {
  const std::string key(name);
  const char* value = std::getenv(key.c_str());  // NOLINT(concurrency-mt-unsafe): pgroups never writes it
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::optional<std::string> environment_text(const EnvironmentLookup& lookup, std::string_view name) {
  if (!lookup || name.empty()) return std::nullopt;
  std::optional<std::string> value = lookup(name);
  if (!value || value->empty()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_environment_count(std::string_view text) noexcept {
  // Digits only, checked before from_chars, which would take a '-' (and so "-0").
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string count_problem(std::string_view name, std::string_view text) {
  return fmt::format(
      "environment variable {}={} is malformed: it must be a non-negative decimal integer (digits only) that fits "
      "in 64 bits",
      name, quoted_excerpt(text));
}

EnvironmentCount environment_count(const EnvironmentLookup& lookup, std::string_view name) {
  EnvironmentCount count;
  const std::optional<std::string> text = environment_text(lookup, name);
  if (!text) return count;
  count.value = parse_environment_count(*text);
  if (!count.value) count.problem = count_problem(name, *text);
  return count;
}

}  // namespace pgroups
