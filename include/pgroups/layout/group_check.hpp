#pragma once
/// \file
/// GroupCheck: the outcome of checking one group kind's live communicator from the
/// inside, by all-reducing every member's global rank (the NCCL layer's
/// nccl::verify_rank_sums and ParallelContext::check_device_groups both report it).
/// Pure: a value type, no MPI or NCCL symbol.

#include <cstdint>
#include <string>

namespace pgroups {

struct GroupCheck {
  /// The group kind, as Layout::group_kinds() names it ("data", "tp-dp", ...).
  std::string kind;
  /// The sum of the global ranks of this rank's group in the layout.
  std::int64_t expected = 0;
  /// The sum the communicator's all-reduce gave.
  std::int64_t actual = 0;
  [[nodiscard]] bool ok() const noexcept { return expected == actual; }
};

}  // namespace pgroups
