#pragma once
// The one rule, and the one message, for a rank given to the layout layer: it must name a
// rank of the world. Layout, Mesh, NodeMap and the communicator bill all check it here.

#include <fmt/format.h>

#include <cstdint>

#include "pgroups/common/error.hpp"

namespace pgroups::detail {

inline void check_world_rank(std::int64_t rank, std::int64_t world_size) {
  if (rank < 0 || rank >= world_size) {
    throw ConfigError(
        fmt::format("rank {} is outside the world of {} ranks (valid: 0..{})", rank, world_size, world_size - 1));
  }
}

}  // namespace pgroups::detail
