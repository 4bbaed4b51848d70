#pragma once
// Integer options of every subcommand, read by the config readers' own integer reader
// (pgroups/common/decimal_integer.hpp): plain decimal, exactly. "010", "0x10", "1e3", "+8",
// " 8", "8_0" and values outside the option's type are usage errors (exit 2) whose
// message names the option and quotes the value as typed; nothing is clamped or read in
// another base, as CLI11's own conversion would.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>

namespace pgroups::cli {

/// Checks `text` as the value of `option` in [min, max]; returns the value, or throws
/// CLI::ValidationError with the readers' message.
[[nodiscard]] std::int64_t parse_integer_option(const std::string& text, const std::string& option, std::int64_t min,
                                                std::int64_t max);

/// Adds `name` (CLI11 syntax, e.g. "-w,--world-size") storing into `target`; its range is
/// T's unless [min, max] is narrower.
/// The name an option is shown by: the last of CLI11's comma-separated names
/// ("-w,--world-size" is "--world-size").
[[nodiscard]] std::string shown_option_name(const std::string& names);

/// Adds `names` (CLI11 syntax, e.g. "-w,--world-size"): each value is checked by
/// parse_integer_option in [min, max] and handed to `store`. A bad value fails
/// app.parse() with CLI::ValidationError (exit 2). The callback sees the text as typed,
/// so CLI11's own conversion (base 0, clamping) never runs.
CLI::Option* add_integer_option(CLI::App& app, const std::string& names, std::function<void(std::int64_t)> store,
                                const std::string& description, std::int64_t min, std::int64_t max);

/// The same, storing into `target`; the range is T's unless [min, max] is narrower.
template <typename T>
CLI::Option* add_integer_option(CLI::App& app, const std::string& names, T& target, const std::string& description,
                                std::int64_t min = std::numeric_limits<T>::min(),
                                std::int64_t max = std::numeric_limits<T>::max()) {
  return add_integer_option(
      app, names, [&target](std::int64_t value) { target = static_cast<T>(value); }, description, min, max);
}

/// The same for an optional target, set only when the option is given.
template <typename T>
CLI::Option* add_integer_option(CLI::App& app, const std::string& names, std::optional<T>& target,
                                const std::string& description, std::int64_t min = std::numeric_limits<T>::min(),
                                std::int64_t max = std::numeric_limits<T>::max()) {
  return add_integer_option(
      app, names, [&target](std::int64_t value) { target = static_cast<T>(value); }, description, min, max);
}

}  // namespace pgroups::cli
