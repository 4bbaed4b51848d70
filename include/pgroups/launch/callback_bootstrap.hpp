#pragma once
/// \file
/// A program's own bootstrap (pgroups/launch/bootstrap.hpp), as NVSHMEM's and UCC's users
/// give theirs (UCC's ucc_oob_coll_t): the program knows the ranks and supplies an
/// all-gather of bytes, and optionally a barrier, over whatever it already has (its own
/// launcher's channel, a key-value service, an RPC layer). The gloo backend then needs
/// nothing more: every group's addresses travel in one call of that all-gather.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/launch/bootstrap.hpp"

namespace pgroups {

struct BootstrapCallbacks {
  /// Collective: every rank's `bytes`, index = rank, within `timeout` (zero: no limit).
  /// Required. What it throws reaches the caller as it is; a result that does not hold
  /// one entry per rank is a BackendError.
  std::function<std::vector<std::string>(std::string_view bytes, std::chrono::milliseconds timeout)> all_gather;
  /// Collective: returns once every rank has entered. Optional: without it the barrier is
  /// an all-gather of nothing.
  std::function<void(std::chrono::milliseconds timeout)> barrier;
};

/// The bootstrap of the program's callbacks, for rank `rank` of `size`, the
/// `local_rank`-th of `local_size` processes on its node; kind() is
/// BootstrapKind::callback. ConfigError naming the value and the rule for a rank not in
/// [0, size), a local rank not in [0, local_size), a local size above size, or no
/// all-gather. O(1); no communication until a collective is asked for.
[[nodiscard]] std::unique_ptr<Bootstrap> make_callback_bootstrap(int rank, int size, int local_rank, int local_size,
                                                                 BootstrapCallbacks callbacks);

}  // namespace pgroups
