#pragma once
/// \file
/// How long ParallelContext waits for the other ranks: the timeout of
/// ContextOptions::timeout, the PGROUPS_TIMEOUT environment variable, and the default.
/// Precedence: a timeout given explicitly (the option, or `--timeout` on the command
/// line) > PGROUPS_TIMEOUT > kDefaultTimeout. Zero means no timeout. Pure: no MPI here.

#include <chrono>
#include <optional>
#include <string_view>

namespace pgroups {

/// The timeout when neither the option nor the environment gives one: long enough for
/// thousands of ranks to create their groups, short enough that a stalled job ends well
/// before a scheduler's own limit.
inline constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::seconds(300);

/// The environment variable read when no timeout is given explicitly: a number of
/// seconds, as parse_timeout_seconds accepts it.
inline constexpr const char* kTimeoutEnvironmentVariable = "PGROUPS_TIMEOUT";

/// Seconds as text: a finite, non-negative decimal number ("5", "0.5", "1e3"; "0" = no
/// timeout), at most 1e9 (about 31 years). A positive value is rounded up to whole
/// milliseconds, so that a tiny one never becomes "no timeout". Throws ConfigError naming
/// `source` (e.g. "--timeout" or "PGROUPS_TIMEOUT") and the text otherwise.
[[nodiscard]] std::chrono::milliseconds parse_timeout_seconds(std::string_view text, std::string_view source);

/// The timeout in effect: `requested` when it has a value (ConfigError if negative),
/// otherwise PGROUPS_TIMEOUT when set and not empty (ConfigError if malformed), otherwise
/// kDefaultTimeout. Reads the environment each call.
[[nodiscard]] std::chrono::milliseconds resolve_timeout(std::optional<std::chrono::milliseconds> requested);

}  // namespace pgroups
