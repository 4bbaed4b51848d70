#pragma once
// What a front door other than ParallelContext's public constructor asks of the one
// construction path: the seed's initializers (process_group_initializer.cpp) build a
// ParallelContext for their plan, restricted to their kinds, so that validation, the
// agreement, carried errors, timeouts and the watchdog are the context's, then take its
// communicators over. Internal to pgroups::context.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pgroups/layout/layout.hpp"

namespace pgroups::detail {

/// An error this rank found before construction: its class name, as judge_records
/// (pgroups/layout/agreement_record.hpp) knows it ("ConfigError"), and its message.
struct OwnError {
  std::string kind;
  std::string message;
};

struct CreationRequest {
  /// This rank's own error: its agreement record carries it instead of the settings
  /// (encode_error), so that every rank throws it and none is left waiting.
  std::optional<OwnError> own_error;
  /// Checks of the validated layout beyond the Layout's own, the same on every rank
  /// (thrown, as an invalid plan is, after the agreement), returning which kinds get a
  /// communicator, by kind index; the others get none (a null entry) and no step.
  /// Precondition for a restriction: sharing off, so that no kind created borrows one
  /// that is not. Empty: every kind.
  std::function<std::vector<bool>(const Layout&)> select_kinds;
};

}  // namespace pgroups::detail
