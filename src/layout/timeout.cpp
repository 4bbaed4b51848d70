#include "pgroups/timeout.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "../common/printable.hpp"
#include "pgroups/error.hpp"

namespace pgroups {

std::chrono::milliseconds parse_timeout_seconds(std::string_view text, std::string_view source) {
  constexpr double kLargest = 1e9;
  const auto invalid = [&](std::string_view why) {
    return ConfigError(fmt::format("{} {} is not a valid timeout: {}", source, detail::quoted_excerpt(text), why));
  };
  double seconds = 0.0;
  const char* const end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, seconds, std::chars_format::general);
  if (text.empty() || error == std::errc::invalid_argument || stop != end || std::isnan(seconds)) {
    throw invalid("expected a number of seconds (0 = no timeout)");
  }
  if (error == std::errc::result_out_of_range || !std::isfinite(seconds) || seconds > kLargest) {
    throw invalid(fmt::format("it must be at most {:.0f} seconds", kLargest));
  }
  if (seconds < 0.0) throw invalid("it must not be negative (0 = no timeout)");
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
}

std::chrono::milliseconds resolve_timeout(std::optional<std::chrono::milliseconds> requested) {
  if (requested) {
    if (requested->count() < 0) {
      throw ConfigError(
          fmt::format("timeout {} ms is invalid: it must not be negative (0 = no timeout)", requested->count()));
    }
    return *requested;
  }
  // getenv is not thread-safe against setenv; pgroups reads, and never writes, the
  // environment.
  const char* from_environment = std::getenv(kTimeoutEnvironmentVariable);
  if (from_environment != nullptr && *from_environment != '\0') {
    return parse_timeout_seconds(from_environment, kTimeoutEnvironmentVariable);
  }
  return kDefaultTimeout;
}

std::string seconds_text(std::chrono::milliseconds duration) {
  const std::int64_t ms = duration.count();
  if (ms < 0) return fmt::format("-{}", seconds_text(-duration));
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  std::string text = fmt::format("{}.{:03}", ms / 1000, ms % 1000);
  while (text.back() == '0') text.pop_back();
  return text + " s";
}

std::string timeout_message(std::chrono::milliseconds timeout, std::string_view what, std::string_view step, int rank,
                            int size) {
  std::string where;
  if (!step.empty()) where = fmt::format("step '{}'", step);
  if (rank >= 0) where += fmt::format("{}rank {} of {}", where.empty() ? "" : ", ", rank, size);
  return fmt::format("timed out after {} waiting for all ranks at {}{}", seconds_text(timeout), what,
                     where.empty() ? std::string() : fmt::format(" ({})", where));
}

}  // namespace pgroups
