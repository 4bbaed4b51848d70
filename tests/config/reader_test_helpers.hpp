#pragma once
// Shared helpers of the configuration reader tests.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "support/configs.hpp"
#include "support/error_message.hpp"

namespace pgroups {

// Short names of the three formats, for tables of cases.
inline constexpr ConfigFormat kToml = ConfigFormat::toml;
inline constexpr ConfigFormat kJson = ConfigFormat::json;
inline constexpr ConfigFormat kPython = ConfigFormat::python;

/// Lets GoogleTest show a ParallelConfig in a failure.
inline void PrintTo(const ParallelConfig& config, std::ostream* out) {
  *out << describe(config) << " seed=" << config.seed;
}

}  // namespace pgroups

namespace pgroups::test {

/// The message of the ParseError that parse_config throws, or "no exception".
inline std::string parse_error(std::string_view text, ConfigFormat format) {
  return message_of<ParseError>([&] { (void)parse_config(text, format); });
}

/// The message of the ConfigError that parse_config throws, or "no exception".
inline std::string config_error(std::string_view text, ConfigFormat format) {
  return message_of<ConfigError>([&] { (void)parse_config(text, format); });
}

/// A preset without a world size, as a file that gives none reads.
inline ParallelConfig make_config(std::int64_t pipeline, std::int64_t tensor_size, TensorMode mode,
                                  std::optional<std::int64_t> depth = std::nullopt) {
  return preset_config(0, pipeline, tensor_size, mode, depth);
}

}  // namespace pgroups::test
