#include "pgroups/timeout.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "pgroups/error.hpp"

namespace pgroups {

std::chrono::milliseconds parse_timeout_seconds(std::string_view text, std::string_view source) {
  constexpr double kLargest = 1e9;
  const auto invalid = [&](std::string_view why) {
    return ConfigError(fmt::format("{} '{}' is not a valid timeout: {}", source, text, why));
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

}  // namespace pgroups
