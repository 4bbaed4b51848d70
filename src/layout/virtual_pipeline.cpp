#include "pgroups/layout/virtual_pipeline.hpp"

#include <fmt/format.h>

#include "pgroups/common/error.hpp"

namespace pgroups {

void VirtualPipeline::set_size(std::optional<std::int64_t> size) {
  if (size && *size < 1) {
    throw ConfigError(fmt::format("virtual pipeline size {} is invalid: it must be a positive integer", *size));
  }
  size_ = size;
  if (size_ && rank_ >= *size_) rank_ = 0;
}

void VirtualPipeline::set_rank(std::int64_t rank) {
  if (rank < 0) {
    throw ConfigError(fmt::format("virtual pipeline rank {} is invalid: it must be a non-negative integer", rank));
  }
  if (size_ && rank >= *size_) {
    throw ConfigError(fmt::format(
        "virtual pipeline rank {} is invalid: the virtual pipeline size is {}, so the rank must be below it", rank,
        *size_));
  }
  rank_ = rank;
}

}  // namespace pgroups
