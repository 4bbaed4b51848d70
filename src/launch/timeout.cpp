#include "pgroups/launch/timeout.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "pgroups/common/environment.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups {

namespace {
std::string seconds_value(double seconds) { return fmt::format("{}", seconds); }
}  // namespace

std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point start,
                                                     std::chrono::milliseconds timeout) noexcept {
  using Clock = std::chrono::steady_clock;
  if (!is_limited(timeout)) return start;
  // Compared in the clock's own unit without forming start + timeout first: the sum is
  // what could overflow.
  const Clock::duration room = Clock::time_point::max() - start;
  const auto room_ms = std::chrono::duration_cast<std::chrono::milliseconds>(room);
  if (timeout >= room_ms) return Clock::time_point::max();
  return start + std::chrono::duration_cast<Clock::duration>(timeout);
}

std::chrono::milliseconds timeout_from_seconds(double seconds, std::string_view source) {
  if (std::isnan(seconds)) {
    throw ConfigError(fmt::format("{} {} is not a valid timeout: expected a number of seconds (0 = no timeout)", source,
                                  seconds_value(seconds)));
  }
  if (seconds < 0.0) {
    throw ConfigError(fmt::format("{} {} is not a valid timeout: it must not be negative (0 = no timeout)", source,
                                  seconds_value(seconds)));
  }
  if (!std::isfinite(seconds) || seconds > kLargestTimeoutSeconds) {
    throw ConfigError(fmt::format("{} {} is not a valid timeout: it must be at most {:.0f} seconds", source,
                                  seconds_value(seconds), kLargestTimeoutSeconds));
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
}

std::chrono::milliseconds checked_timeout(std::chrono::milliseconds timeout, std::string_view source) {
  if (timeout.count() < 0) {
    throw ConfigError(
        fmt::format("{} {} ms is invalid: it must not be negative (0 = no timeout)", source, timeout.count()));
  }
  if (timeout > kLargestTimeout) {
    throw ConfigError(fmt::format("{} {} ms is invalid: it must be at most {} ms ({:.0f} seconds)", source,
                                  timeout.count(), kLargestTimeout.count(), kLargestTimeoutSeconds));
  }
  return timeout;
}

std::chrono::milliseconds parse_timeout_seconds(std::string_view text, std::string_view source) {
  const auto invalid = [&](std::string_view why) {
    return ConfigError(fmt::format("{} {} is not a valid timeout: {}", source, quoted_excerpt(text), why));
  };
  double seconds = 0.0;
  const char* const end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, seconds, std::chars_format::general);
  if (text.empty() || error == std::errc::invalid_argument || stop != end || std::isnan(seconds)) {
    throw invalid("expected a number of seconds (0 = no timeout)");
  }
  if (text.front() == '-' && (error == std::errc::result_out_of_range || seconds < 0.0)) {
    throw invalid("it must not be negative (0 = no timeout)");
  }
  if (error == std::errc::result_out_of_range) {
    // Out of range either way: past the largest double (1e400) or, below the smallest
    // positive one, an underflow (1e-400). The syntax is known good here, so strtod only
    // tells which side; calling 1e-400 "more than a billion" would mislead.
    const std::string copy(text);
    const double magnitude = std::strtod(copy.c_str(), nullptr);
    if (std::fabs(magnitude) < 1.0) {
      throw invalid(
          "it is too small: below the smallest number read (about 1e-308); 0.001 is the shortest timeout, 1 ms "
          "(0 = no timeout)");
    }
  }
  if (error == std::errc::result_out_of_range || !std::isfinite(seconds) || seconds > kLargestTimeoutSeconds) {
    throw invalid(fmt::format("it must be at most {:.0f} seconds", kLargestTimeoutSeconds));
  }
  return timeout_from_seconds(seconds, source);
}

std::chrono::milliseconds resolve_timeout(std::optional<std::chrono::milliseconds> requested) {
  if (requested) return checked_timeout(*requested, "timeout");
  if (const auto from_environment = environment_text(process_environment, kTimeoutEnvironmentVariable)) {
    return parse_timeout_seconds(*from_environment, kTimeoutEnvironmentVariable);
  }
  return kDefaultTimeout;
}

std::chrono::milliseconds resolve_timeout_text(std::optional<std::string_view> seconds, std::string_view source) {
  return resolve_timeout(seconds ? std::optional(parse_timeout_seconds(*seconds, source)) : std::nullopt);
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
                            int size, std::span<const int> missing) {
  std::string where;
  if (!step.empty()) where = fmt::format("step '{}'", step);
  if (rank >= 0) where += fmt::format("{}rank {} of {}", where.empty() ? "" : ", ", rank, size);
  std::string absent;
  if (!missing.empty()) {
    absent = fmt::format(": {} {} did not arrive", missing.size() == 1 ? "rank" : "ranks", rank_list(missing));
  }
  return fmt::format("timed out after {} waiting for all ranks at {}{}{}", seconds_text(timeout), what,
                     where.empty() ? std::string() : fmt::format(" ({})", where), absent);
}

}  // namespace pgroups
