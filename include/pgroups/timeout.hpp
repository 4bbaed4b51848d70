#pragma once
/// \file
/// The one timeout vocabulary of pgroups, for MPI and NCCL alike: how long a rank waits
/// for the others (ContextOptions::timeout, `--timeout`, the PGROUPS_TIMEOUT environment
/// variable, the default), what zero means (no timeout, everywhere: mpi::Deadline, the
/// watchdog, NCCL's polling), and the one message every timeout prints. Precedence: a
/// timeout given explicitly (the option, or `--timeout` on the command line) >
/// PGROUPS_TIMEOUT > kDefaultTimeout. Pure: no MPI or NCCL here.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace pgroups {

/// The timeout when neither the option nor the environment gives one: long enough for
/// thousands of ranks to create their groups, short enough that a stalled job ends well
/// before a scheduler's own limit.
inline constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::seconds(300);

/// Whether `timeout` bounds a wait: zero (or less) means no timeout, for every wait of
/// pgroups.
[[nodiscard]] constexpr bool is_limited(std::chrono::milliseconds timeout) noexcept {
  return timeout > std::chrono::milliseconds::zero();
}

/// The longest a wait on `timeout` may take, for waits that need a finite bound (NCCL's
/// polling loops): `timeout` itself when is_limited, otherwise ten years, which is "no
/// timeout" for any job and still far from overflowing a steady_clock time point.
[[nodiscard]] constexpr std::chrono::milliseconds wait_limit(std::chrono::milliseconds timeout) noexcept {
  return is_limited(timeout) ? timeout : std::chrono::milliseconds(std::chrono::hours(24 * 3653));
}

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

/// A duration as messages show it, in seconds: "5 s", "0.25 s", "300 s".
[[nodiscard]] std::string seconds_text(std::chrono::milliseconds duration);

/// The message of every timeout of pgroups, MPI and NCCL alike (TimeoutError, and the
/// watchdog that ends a rank blocked past its deadline): "timed out after 5 s waiting for
/// all ranks at <what> (step '<step>', rank <rank> of <size>)". The parenthesis names
/// only what is known: no step when `step` is empty, no rank when `rank` is negative, no
/// parenthesis when neither.
[[nodiscard]] std::string timeout_message(std::chrono::milliseconds timeout, std::string_view what,
                                          std::string_view step = {}, int rank = -1, int size = 0);

}  // namespace pgroups
