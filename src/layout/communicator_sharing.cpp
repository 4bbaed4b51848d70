#include "pgroups/layout/communicator_sharing.hpp"

#include <fmt/format.h>

#include <map>

#include "pgroups/common/error.hpp"
#include "world_rank.hpp"

namespace pgroups {

std::string_view comm_source_name(CommSource source) noexcept {
  switch (source) {
    case CommSource::world: return "world";
    case CommSource::singleton: return "singleton";
    case CommSource::shared: return "shared";
    case CommSource::own: return "own";
  }
  return "own";
}

std::vector<KindSharing> communicator_sharing(const Layout& layout, bool share) {
  return communicator_sharing(layout, share, std::vector<bool>(layout.group_kinds().size(), true));
}

std::vector<KindSharing> communicator_sharing(const Layout& layout, bool share, const std::vector<bool>& selected) {
  const auto kinds = layout.group_kinds();
  if (selected.size() != kinds.size()) {
    throw ConfigError(fmt::format("communicator sharing: the selection has {} entries, the layout {} group kinds",
                                  selected.size(), kinds.size()));
  }
  std::vector<KindSharing> result(kinds.size());
  // The owner of each partition, by its key (Layout::partition_key): equal keys are equal
  // partitions whichever notation made them (a legacy sequence_dp block mesh, an embd that
  // keeps both members of two-stage pipelines), and O(kinds x dimensions) whatever the world
  // and group sizes, so that explain answers at once at any W.
  std::map<PartitionKey, std::size_t> owners;
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    KindSharing& entry = result[kind];
    entry.owner = kind;
    // `global` has always been the world's duplicate.
    if (kinds[kind].mode == ParallelMode::global) {
      entry.source = CommSource::world;
      continue;
    }
    if (!share) continue;
    if (layout.group_size(kind) == 1) {
      entry.source = CommSource::singleton;
      continue;
    }
    PartitionKey key = layout.partition_key(kind);
    if (key.is_world()) {
      entry.source = CommSource::world;
      continue;
    }
    // A kind left out of the selection is never created, so it cannot lend its
    // communicator: the first selected kind of its partition owns it instead.
    if (!selected[kind]) continue;
    if (const auto owner = owners.find(key); owner != owners.end()) {
      entry.source = CommSource::shared;
      entry.owner = owner->second;
    } else {
      owners.emplace(std::move(key), kind);
    }
  }
  return result;
}

namespace {

// The bill and the list of kinds whose communicator `rank` creates, from one sharing.
CommunicatorBill bill_of(const Layout& layout, std::int64_t rank, const std::vector<KindSharing>& sharing,
                         const std::vector<KindSharing>& shared, std::vector<std::size_t>* created_kinds) {
  const auto kinds = layout.group_kinds();
  CommunicatorBill bill;
  bill.kinds = static_cast<std::int64_t>(kinds.size());
  bill.created = 1;  // the duplicate of the world
  bool world_counted = false;
  for (std::size_t kind = 0; kind < kinds.size(); ++kind) {
    const std::int64_t size = layout.group_size(kind);
    // distinct and singletons describe the layout, whatever the switch.
    if (size == 1) {
      ++bill.singletons;
    } else if (shared[kind].source == CommSource::world) {
      if (!world_counted) ++bill.distinct;
      world_counted = true;
    } else if (shared[kind].source == CommSource::own) {
      ++bill.distinct;
    }
    if (sharing[kind].source == CommSource::own && size > 1 && layout.is_member(rank, kind)) {
      ++bill.created;
      if (created_kinds) created_kinds->push_back(kind);
    }
  }
  return bill;
}

}  // namespace

CommunicatorBill communicator_bill(const Layout& layout, std::int64_t rank, bool share) {
  detail::check_world_rank(rank, layout.world_size());
  const std::vector<KindSharing> shared = communicator_sharing(layout, true);
  return bill_of(layout, rank, share ? shared : communicator_sharing(layout, false), shared, nullptr);
}

CommunicatorBill largest_communicator_bill(const Layout& layout, bool share) {
  return communicator_bill(layout, 0, share);
}

std::vector<std::size_t> created_kinds(const Layout& layout, std::int64_t rank, bool share) {
  detail::check_world_rank(rank, layout.world_size());
  const std::vector<KindSharing> shared = communicator_sharing(layout, true);
  std::vector<std::size_t> created;
  (void)bill_of(layout, rank, share ? shared : communicator_sharing(layout, false), shared, &created);
  return created;
}

std::string bill_text(const CommunicatorBill& bill) {
  return fmt::format("kinds {}, distinct {}, singletons {}, created {} communicators per rank", bill.kinds,
                     bill.distinct, bill.singletons, bill.created);
}

}  // namespace pgroups
