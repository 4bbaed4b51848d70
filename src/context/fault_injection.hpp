#pragma once
// A test hook, internal to pgroups: makes ParallelContext's construction fail just
// before it creates a given mode, on every rank, so that tests can check that a failure
// part-way frees what was already created. Not thread-safe; tests only.

#include <optional>

#include "pgroups/parallel_mode.hpp"

namespace pgroups::detail {

/// From now on, constructing a ParallelContext throws BackendError before creating
/// `mode` (nothing: never).
void fail_creation_before(std::optional<ParallelMode> mode) noexcept;

}  // namespace pgroups::detail
