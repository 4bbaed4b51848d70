#include "pgroups/report/output_size.hpp"

#include <fmt/format.h>

#include <string>

#include "pgroups/common/error.hpp"

namespace pgroups::report {

void check_output_estimate(std::string_view what, std::int64_t world_size, std::int64_t kinds,
                           std::int64_t bytes_per_cell) {
  std::int64_t cells = 0;
  std::int64_t bytes = 0;
  const bool overflow =
      __builtin_mul_overflow(world_size, kinds, &cells) || __builtin_mul_overflow(cells, bytes_per_cell, &bytes);
  if (!overflow && bytes <= kMaxOutputBytes) return;
  const std::string estimate =
      overflow ? std::string("more than 2^63 bytes") : fmt::format("about {} MiB", (bytes + (1 << 20) - 1) >> 20);
  throw ConfigError(
      fmt::format("{} of world size {} x {} group kinds would take {}, more than the cap of {} MiB on "
                  "one output (docs/reference/errors.md); use `pgroups explain --rank R` for one rank, or fewer "
                  "ranks or kinds",
                  what, world_size, kinds, estimate, kMaxOutputBytes >> 20));
}

}  // namespace pgroups::report
