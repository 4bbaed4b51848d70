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
#include <span>
#include <string>
#include <string_view>

namespace pgroups {

/// The timeout when neither the option nor the environment gives one: long enough for
/// thousands of ranks to create their groups, short enough that a stalled job ends well
/// before a scheduler's own limit.
inline constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::seconds(300);

/// The fixed waits that no user's timeout governs, each declared once (Python binds them,
/// `_pgroups.default_*_seconds`):
/// - how long the rank that serves a store keeps serving for ranks that have not left,
///   when the job's timeout is none (a rank that died must not keep it serving forever);
inline constexpr std::chrono::milliseconds kStoreServingWhenUnlimited = std::chrono::seconds(30);
/// - how often a client tries again to reach a store that does not listen yet, and how
///   often a waiting loop over a store asks it again (Python's recovery);
inline constexpr std::chrono::milliseconds kStoreRetryInterval = std::chrono::milliseconds(50);
/// - the timeout of the store client a recovery heartbeat holds of its own.
inline constexpr std::chrono::milliseconds kHeartbeatStoreTimeout = std::chrono::seconds(30);

/// The longest timeout pgroups accepts, in every layer (ContextOptions::timeout,
/// `--timeout`, PGROUPS_TIMEOUT, Python's `timeout=`): 1e9 seconds, about 31.7 years.
/// Far enough from overflowing a steady_clock time point (nanoseconds in 64 bits, about
/// 292 years) that a deadline "now + timeout" always fits; deadline_after saturates
/// anyway, so no value reaching a Deadline can overflow.
inline constexpr std::chrono::milliseconds kLargestTimeout{1'000'000'000'000};
/// kLargestTimeout in seconds, as messages and Python show it.
inline constexpr double kLargestTimeoutSeconds = 1e9;

/// The one rule for "0 means none": whether `timeout` bounds a wait. Zero (or less) means
/// no timeout, for every wait of pgroups (mpi::Deadline, the watchdog, NCCL's polling,
/// Python).
[[nodiscard]] constexpr bool is_limited(std::chrono::milliseconds timeout) noexcept {
  return timeout > std::chrono::milliseconds::zero();
}

/// The longest a wait on `timeout` may take, for waits that need a finite bound (NCCL's
/// polling loops): `timeout` itself when is_limited, otherwise kLargestTimeout, which is
/// "no timeout" for any job.
[[nodiscard]] constexpr std::chrono::milliseconds wait_limit(std::chrono::milliseconds timeout) noexcept {
  return is_limited(timeout) ? timeout : kLargestTimeout;
}

/// `start + timeout`, saturated at the clock's largest time point instead of
/// overflowing; a timeout of zero or less gives `start`. Every deadline of pgroups is
/// computed here. O(1).
[[nodiscard]] std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point start,
                                                                   std::chrono::milliseconds timeout) noexcept;

/// A timeout given as a number of seconds (Python's `timeout=`, the text of `--timeout`):
/// finite, not negative and at most kLargestTimeoutSeconds, else ConfigError naming
/// `source` and the value. Zero means no timeout; a positive value is rounded up to whole
/// milliseconds, so that a tiny one never becomes "no timeout".
[[nodiscard]] std::chrono::milliseconds timeout_from_seconds(double seconds, std::string_view source);

/// `timeout` itself when it is between zero and kLargestTimeout, else ConfigError naming
/// `source` and the value (ContextOptions::timeout).
[[nodiscard]] std::chrono::milliseconds checked_timeout(std::chrono::milliseconds timeout, std::string_view source);

/// The environment variable read when no timeout is given explicitly: a number of
/// seconds, as parse_timeout_seconds accepts it.
inline constexpr const char* kTimeoutEnvironmentVariable = "PGROUPS_TIMEOUT";

/// Seconds as text: a finite, non-negative decimal number ("5", "0.5", "1e3"; "0" = no
/// timeout), at most kLargestTimeoutSeconds (timeout_from_seconds). A positive value is rounded up to whole
/// milliseconds, so that a tiny one never becomes "no timeout"; one too small for a double
/// (`1e-400`) is refused as too small, not read as 0. Throws ConfigError naming `source`
/// (e.g. "--timeout" or "PGROUPS_TIMEOUT") and the text otherwise.
[[nodiscard]] std::chrono::milliseconds parse_timeout_seconds(std::string_view text, std::string_view source);

/// The timeout in effect: `requested` when it has a value (checked_timeout), otherwise
/// PGROUPS_TIMEOUT when set and not empty (ConfigError if malformed), otherwise
/// kDefaultTimeout. Reads the environment each call.
[[nodiscard]] std::chrono::milliseconds resolve_timeout(std::optional<std::chrono::milliseconds> requested);

/// The same resolution for a timeout given as text (the CLI's `--timeout SECONDS`, named
/// `source` in messages): parse_timeout_seconds when given, then resolve_timeout. The one
/// function the CLI and the library share.
[[nodiscard]] std::chrono::milliseconds resolve_timeout_text(std::optional<std::string_view> seconds,
                                                             std::string_view source);

/// A duration as messages show it, in seconds: "5 s", "0.25 s", "300 s".
[[nodiscard]] std::string seconds_text(std::chrono::milliseconds duration);

/// The message of every timeout of pgroups, MPI and NCCL alike (TimeoutError, and the
/// watchdog that ends a rank blocked past its deadline): "timed out after 5 s waiting for
/// all ranks at <what> (step '<step>', rank <rank> of <size>)". The parenthesis names
/// only what is known: no step when `step` is empty, no rank when `rank` is negative, no
/// parenthesis when neither. Where the transport knows which ranks never came (torch's
/// store counts arrivals; MPI's collectives do not), `missing` (ascending) adds
/// ": ranks 3, 5-7 did not arrive"; empty adds nothing.
[[nodiscard]] std::string timeout_message(std::chrono::milliseconds timeout, std::string_view what,
                                          std::string_view step = {}, int rank = -1, int size = 0,
                                          std::span<const int> missing = {});

}  // namespace pgroups
