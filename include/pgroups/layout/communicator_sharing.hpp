#pragma once
/// \file
/// Communicator economy (docs/using/context.md, "Communicator economy"): which group kinds of a Layout can use one
/// communicator, and what a layout costs per rank in communicators ("the bill"), decided
/// from the layout alone, exactly, without MPI and without enumerating the world.
///
/// Every kind gets one of four sources:
///   world      its one group is the whole world (a preset's `global`, or a mesh token
///              whose dimensions are all the mesh's others of size 1): it uses the
///              duplicate of the world the context already holds;
///   singleton  every group has one rank (a mesh dimension of size 1, Megatron's
///              `pos_embd`, ...): a local communicator of this rank alone, created with no
///              collective over the world, and one per rank whatever the number of such
///              kinds: every one-rank kind of a rank shares it (MPI: one MPI_Comm_dup of
///              MPI_COMM_SELF, made for the first such kind created; NCCL, where a one-rank
///              communicator costs device memory: none until a kind asks, then one made by
///              this rank alone that every one-rank kind uses; torch: one group);
///   shared     the same partition of the world, with the same rank order in every
///              group, as an earlier kind (its `owner`): it uses that kind's communicator;
///   own        the kind's own communicator, created by the strategy (a collective).
///
/// Two kinds have the same partition exactly when their partition keys are equal
/// (pgroups/layout/partition_key.hpp): the runs of strides their groups vary, whichever
/// notation or mesh made them, so a legacy sequence_dp that is tensor's blocks shares
/// tensor's communicator, and Megatron's `embd` of two stages shares the pipeline's. The
/// decision reads one key per kind, O(kinds x dimensions). A partial kind shares only with
/// a kind that picks the same members of the same groups.
///
/// With sharing off (ContextOptions::share_communicators false, `--no-share`) every kind
/// but `global` is `own`: one communicator per kind, each created by the strategy, as
/// before communicators were shared.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/layout.hpp"

namespace pgroups {

enum class CommSource : std::uint8_t { world, singleton, shared, own };

/// "world", "singleton", "shared", "own".
[[nodiscard]] std::string_view comm_source_name(CommSource source) noexcept;

struct KindSharing {
  CommSource source = CommSource::own;
  /// The kind whose communicator this kind uses: itself for `own`, the first kind of the
  /// same partition for `shared`; itself for `singleton` as decided here (a context sets it
  /// to the one-rank kind whose communicator it lends, a choice of each rank's own); unused
  /// for `world`.
  std::size_t owner = 0;
};

/// One entry per kind of `layout`, by kind index (the same on every rank).
/// O(kinds x dimensions x log kinds): one partition key per kind, found in a map of the
/// keys before it; no group is enumerated.
[[nodiscard]] std::vector<KindSharing> communicator_sharing(const Layout& layout, bool share = true);
/// The same, over the kinds `selected` (by kind index; a context built for some modes) only:
/// the first selected kind of a partition owns it, so that no selected kind borrows the
/// communicator of a kind that is never created. An unselected kind never owns; its own
/// entry is `own` (it creates nothing). ConfigError when `selected` has not one entry per kind.
[[nodiscard]] std::vector<KindSharing> communicator_sharing(const Layout& layout, bool share,
                                                            const std::vector<bool>& selected);

/// What a layout costs one rank (docs/developing/performance.md, "Communicator economy"):
///   kinds       the layout's group kinds;
///   distinct    distinct partitions (partition keys) among them whose groups have more
///               than one rank (the whole world counted once);
///   singletons  kinds whose groups all have one rank;
///   created     communicators this rank creates with a collective among two or more
///               ranks: the duplicate of the world, plus each `own` kind of more than
///               one rank per group of which the rank is a member (a one-rank
///               communicator is not counted).
/// With the NCCL backend nccl_created counts the NCCL ones the same way (the NCCL world
/// and one split per such kind; the one-rank ones are made only when asked for).
struct CommunicatorBill {
  std::int64_t kinds = 0;
  std::int64_t distinct = 0;
  std::int64_t singletons = 0;
  std::int64_t created = 0;
  friend bool operator==(const CommunicatorBill&, const CommunicatorBill&) = default;
};

/// The bill of `rank` (ConfigError for a rank outside the world). O(kinds x dimensions x log kinds).
[[nodiscard]] CommunicatorBill communicator_bill(const Layout& layout, std::int64_t rank, bool share = true);
/// The largest per-rank figures: rank 0's, since rank 0 is a member of one group of every
/// kind (every partial kind keeps the first rank of each group it picks from).
[[nodiscard]] CommunicatorBill largest_communicator_bill(const Layout& layout, bool share = true);

/// The kinds whose communicator `rank` creates itself, ascending: those of source `own`
/// (with `share`; every kind but `global` without it) of more than one rank that have
/// `rank` as a member. The bill's `created` is their number plus the duplicate of the
/// world. ConfigError for a rank outside the world. O(kinds x dimensions x log kinds).
[[nodiscard]] std::vector<std::size_t> created_kinds(const Layout& layout, std::int64_t rank, bool share = true);

/// "kinds 7, distinct 3, singletons 2, created 3 communicators per rank" (the CLI's one line).
[[nodiscard]] std::string bill_text(const CommunicatorBill& bill);

}  // namespace pgroups
