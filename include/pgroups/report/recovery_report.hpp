#pragma once
/// \file
/// How a recovery (pgroups/layout/recovery.hpp) is shown by `pgroups plan --lost` /
/// `explain --lost` and by Python's Plan.after_loss, and a resize by `plan --resize-to`: what was lost, dropped, kept
/// and renumbered, the spares, the rank map, and the bill (communicators destroyed and created per surviving rank), in
/// bounded time at any world size for text.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "pgroups/layout/recovery.hpp"
#include "pgroups/report/bill_report.hpp"

namespace pgroups::report {

/// The recovery's keys of the plan JSON: "rank_map" (entry r the old rank of new rank r),
/// "spares", "lost", "joining" (ascending), "shrink" {"dim", "old_size", "new_size",
/// "replica_size", "dropped", "added"} and "recovery_bill" (recovery_bill_json). Throws
/// ConfigError like plan_json when the new world or the spares pass kMaxJsonWorldSize.
[[nodiscard]] nlohmann::json recovery_json(const Recovery& recovery, const BillOptions& bill);

/// {"ranks": {"active", "spare", "lost", "joined", "renumbered"}, "communicators_per_rank":
/// {"destroyed", "created"}}: a survivor destroys every communicator of the old layout
/// (a group over a dead rank cannot be reused) and creates the new layout's (bill_report's
/// largest per-rank `created`); every active rank keeps its process, device and the
/// weights of its replica. O(kinds x dimensions x log kinds): the two layouts' bills.
[[nodiscard]] nlohmann::json recovery_bill_json(const Recovery& recovery, const BillOptions& bill);

/// The recovery as text, before the new plan: the shrinking dimension's old and new size,
/// the dropped replicas with their lost ranks, the spares, what moved (the renumbered
/// replicas, as ranges), the joiners' replicas, the rank map (elided) and the bill.
[[nodiscard]] std::string recovery_text(const Recovery& recovery, const BillOptions& bill);

/// A resize (pgroups/layout/recovery.hpp, resized) from `old_layout` to a world of `world`
/// ranks, before the new plan: "resize of world size 16 to 13 ranks: dp 4 -> 3 (a replica
/// is 4 ranks); 12 ranks run the layout, spares: 1 (ranks 12-12)", and the data rule.
[[nodiscard]] std::string resize_text(const Layout& old_layout, const Resize& resize, std::int64_t world);
/// {"resize": {"world", "dim", "old_size", "new_size", "replica_size", "spares", "first_spare"}}.
[[nodiscard]] nlohmann::json resize_json(const Layout& old_layout, const Resize& resize, std::int64_t world);

/// One old rank after the recovery: "old rank R runs new rank N" (then the caller shows
/// N in the new layout), "old rank R is a spare: ..." or "old rank R is lost".
[[nodiscard]] std::string recovery_rank_text(const Recovery& recovery, std::int64_t old_rank);
/// {"old_rank", "fate", "new_rank" (null unless active)}.
[[nodiscard]] nlohmann::json recovery_rank_json(const Recovery& recovery, std::int64_t old_rank);

/// `pgroups plan --what-if node --format json` (and Plan.what_if): {"what_if": {"level":
/// "node", "gpus_per_node", "node_count", "shrink": {"dim", "old_size", "replica_size"},
/// "classes": [{"nodes", "first_node", "dropped", "new_size" (0: nothing survives),
/// "survives", "spares", "renumbered": [min, max] (null where not counted),
/// "communicators_per_rank": {"destroyed", "created"} (null when nothing survives)}]}}.
/// O(classes × (kinds x dimensions x log kinds)) beyond what_if_node_loss.
[[nodiscard]] nlohmann::json what_if_json(const Layout& layout, const NodeLossWhatIf& what_if, const BillOptions& bill);

/// The same as text: one line per class, the survivors as recover's line reads
/// ("dp 4 -> 3"), the spares, the renumbered range and the bill.
[[nodiscard]] std::string what_if_text(const Layout& layout, const NodeLossWhatIf& what_if, const BillOptions& bill);

}  // namespace pgroups::report
