#pragma once
/// \file
/// The cap on one output built in memory (a JSON plan, a picture), checked before anything
/// is allocated so that an absurd world size fails at once with a message, not after
/// exhausting memory (docs/reference/errors.md, "Output").

#include <cstdint>
#include <string_view>

namespace pgroups::report {

/// The most one output built in memory may take: 1 GiB.
inline constexpr std::int64_t kMaxOutputBytes = std::int64_t{1} << 30;

/// Checks an output whose size grows with the work: its estimate, `world_size` x `kinds`
/// x `bytes_per_cell` (overflow-safe), against kMaxOutputBytes. Throws ConfigError (exit
/// 3) naming `what`, the world size, the kinds, the estimate and the cap. O(1).
void check_output_estimate(std::string_view what, std::int64_t world_size, std::int64_t kinds,
                           std::int64_t bytes_per_cell);

}  // namespace pgroups::report
