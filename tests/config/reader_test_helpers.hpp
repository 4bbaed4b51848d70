#pragma once
// Shared helpers of the configuration reader tests.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "pgroups/config_reader.hpp"
#include "pgroups/error.hpp"

namespace pgroups {

/// Lets GoogleTest show a ParallelConfig in a failure.
inline void PrintTo(const ParallelConfig& config, std::ostream* out) {
  *out << describe(config) << " seed=" << config.seed;
}

}  // namespace pgroups

namespace pgroups::test {

/// The message of the ParseError that parse_config throws, or "accepted".
inline std::string parse_error(std::string_view text, ConfigFormat format) {
  try {
    (void)parse_config(text, format);
  } catch (const ParseError& error) {
    return error.what();
  }
  return "accepted";
}

/// The message of the ConfigError that parse_config throws, or "accepted".
inline std::string config_error(std::string_view text, ConfigFormat format) {
  try {
    (void)parse_config(text, format);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "accepted";
}

inline ParallelConfig make_config(std::int64_t pipeline, std::int64_t tensor_size, TensorMode mode,
                                  std::optional<std::int64_t> depth = std::nullopt) {
  ParallelConfig config;
  config.pipeline = pipeline;
  config.tensor_size = tensor_size;
  config.tensor_mode = mode;
  config.depth = depth;
  return config;
}

}  // namespace pgroups::test
