#pragma once
/// \file
/// The one reader of the process environment (target pgroups::common): every variable
/// pgroups reads (the launchers' rank variables, PGROUPS_TIMEOUT, SLURM_JOB_NODELIST)
/// comes through here, and a variable that holds a count or an index is read by one rule
/// everywhere (docs/reference/topology.md, "Launcher variables"):
///
///   - unset and empty are the same: not given;
///   - a value is decimal digits only ("0", "17"): no sign ("-1", "+1", "-0"), no space,
///     no other base, and it fits in 64 bits; anything else is malformed and never
///     trusted, with one message naming the variable, the value and this rule
///     (count_problem).
///
/// What a malformed value leads to is the caller's, and documented there: unknown in
/// what the launcher reports (detect_launcher, `pgroups info`, which warns with the
/// message), a ConfigError with the message where pgroups would act on it (the choice of
/// a GPU). Reads only: pgroups never writes the environment, so getenv's lack of thread
/// safety against setenv does not arise from pgroups itself.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace pgroups {

/// A lookup of one environment variable: its value, or nothing when unset. Tests pass
/// their own; process_environment is the real one.
using EnvironmentLookup = std::function<std::optional<std::string>(std::string_view name)>;

/// This process's environment: the value of `name`, nothing when unset. The one getenv
/// of pgroups.
[[nodiscard]] std::optional<std::string> process_environment(std::string_view name);

/// `name`'s value from `lookup`, nothing when unset or empty.
[[nodiscard]] std::optional<std::string> environment_text(const EnvironmentLookup& lookup, std::string_view name);

/// A variable read as a count or an index (see the file comment).
struct EnvironmentCount {
  /// The value when given and well formed.
  std::optional<std::int64_t> value;
  /// When given but malformed: count_problem(name, text); empty otherwise.
  std::string problem;

  [[nodiscard]] bool malformed() const noexcept { return !problem.empty(); }
};

/// `name` from `lookup` as a count: unset or empty gives neither a value nor a problem.
/// Never throws. O(size of the value).
[[nodiscard]] EnvironmentCount environment_count(const EnvironmentLookup& lookup, std::string_view name);

/// `text` as a count by the rule above; nothing when malformed. O(size of text).
[[nodiscard]] std::optional<std::int64_t> parse_environment_count(std::string_view text) noexcept;

/// The message for a malformed count: "environment variable OMPI_COMM_WORLD_LOCAL_RANK='abc'
/// is malformed: it must be a non-negative decimal integer (digits only) that fits in 64
/// bits", the value quoted escaped and cut.
[[nodiscard]] std::string count_problem(std::string_view name, std::string_view text);

}  // namespace pgroups
