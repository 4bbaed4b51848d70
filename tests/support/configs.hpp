#pragma once
// Building a preset configuration in one line, and the message validate() rejects it with.

#include <cstdint>
#include <optional>

#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_config.hpp"
#include "support/error_message.hpp"

namespace pgroups::test {

/// A Colossal-AI preset: `world` ranks (0: not given), `pipeline` stages, a tensor group of
/// `tensor` ranks in `mode`, and the 2.5d `depth` when given. Not validated.
inline ParallelConfig preset_config(std::int64_t world, std::int64_t pipeline, std::int64_t tensor, TensorMode mode,
                                    std::optional<std::int64_t> depth = std::nullopt) {
  ParallelConfig config;
  config.world_size = world;
  config.pipeline = pipeline;
  config.tensor_size = tensor;
  config.tensor_mode = mode;
  config.depth = depth;
  return config;
}

/// The message of the ConfigError that validate() throws for `config`, or "no exception".
inline std::string rejection(const ParallelConfig& config) {
  return message_of<ConfigError>([&] { validate(config); });
}

}  // namespace pgroups::test
