#pragma once
/// \file
/// How a plan is shown, by `pgroups plan` / `explain` and by Python's Plan.to_json and
/// Plan.explain alike: docs/reference/spec.md §4's JSON, and text with large groups and long group
/// lists elided so that a plan of any size prints in bounded time. Every printer asks the
/// Layout (its kinds, summary() and kind notes), never whether it was a preset or a mesh.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "pgroups/layout/layout.hpp"
#include "pgroups/report/bill_report.hpp"
#include "pgroups/report/locality_report.hpp"

namespace pgroups::report {

/// The "schema_version" of the plan and explain JSON (docs/reference/spec.md §4): raised when a key
/// changes meaning, is deprecated or goes away, not when one is added.
inline constexpr int kSchemaVersion = 2;

/// Largest world that plan_json enumerates: the output holds O(W * kinds) numbers.
inline constexpr std::int64_t kMaxJsonWorldSize = std::int64_t{1} << 22;
/// What one rank in one kind costs a JSON plan while it is built: two values of the tree
/// (16 bytes each, and their arrays' slack) and their text. W x kinds x this is checked
/// against kMaxOutputBytes (output_size.hpp) before the tree is allocated.
inline constexpr std::int64_t kJsonBytesPerCell = 64;

/// The whole plan in docs/reference/spec.md §4's schema: "schema_version", "config" (config_json of
/// the layout), "data_parallel_size" and "kinds" keyed by group kind (a mesh's tokens as
/// given); a rank outside a partial kind (embd) has null local_rank and group_size. The
/// deprecated "modes" and per-kind "world_size" repeat "kinds" and "group_size".
/// Throws ConfigError above kMaxJsonWorldSize, or when W x kinds x kJsonBytesPerCell is
/// above kMaxOutputBytes. O(W * kinds).
[[nodiscard]] nlohmann::json plan_json(const Layout& layout);

/// What `pgroups plan --format json` prints (less its newline) and Python's Plan.to_json
/// returns, built once here so that the two cannot drift: plan_json, "locality"
/// (locality_json) when a report is given, and the bill (add_bill_json).
[[nodiscard]] nlohmann::json plan_document_json(const Layout& layout, const std::optional<LocalityReport>& locality,
                                                const BillOptions& bill);
/// What `pgroups plan` prints as text: plan_text, locality_text when a report is given,
/// and bill_text, a blank line between each.
[[nodiscard]] std::string plan_document_text(const Layout& layout, const std::optional<LocalityReport>& locality,
                                             const BillOptions& bill);

/// The plan as text: "world size W = " and the layout's summary(), each kind's note, then
/// a table headed `kind` with per kind its group count, size and groups (elided).
[[nodiscard]] std::string plan_text(const Layout& layout);

/// One rank's picture as text: coordinates, then a table headed `kind` with per kind the
/// rank's local rank, group size and group. Throws ConfigError for a bad rank.
[[nodiscard]] std::string explain_text(const Layout& layout, std::int64_t rank);

/// The same as JSON: {"schema_version", "rank", "config", "coordinates", "kinds": {name:
/// {local_rank, group_size, group_index, group (elided past 64 members as first/last
/// 32)}}}; {"member": false} for a kind the rank is in no group of. The deprecated
/// "modes" and "world_size" repeat "kinds" and "group_size".
[[nodiscard]] nlohmann::json explain_json(const Layout& layout, std::int64_t rank);

}  // namespace pgroups::report
