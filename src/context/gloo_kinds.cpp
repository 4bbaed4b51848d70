#include "gloo_kinds.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "pgroups/common/environment.hpp"
#include "pgroups/gloo/gloo_groups.hpp"

namespace pgroups::detail {

void connect_gloo_kinds(std::vector<KindGroup>& created, std::shared_ptr<::gloo::Context>& world, const Layout& layout,
                        std::int64_t global_rank, Bootstrap& bootstrap, std::chrono::milliseconds timeout) {
  // The groups to connect, one per distinct partition: the world first when a kind is the
  // whole world (a mesh's kinds often are not: then no rank pays its W - 1 pairs), then
  // each kind that owns its communicator, then, once, this rank alone. The entries are
  // exchanged by position, so their list has the same shape on every rank, whatever this
  // rank is a member of: a kind's entry is empty where the rank has no group of it (a
  // partial kind such as pos_embd), and the entry of the rank alone is always the last.
  std::vector<std::vector<std::int64_t>> groups(1);
  const bool world_used = std::any_of(created.begin(), created.end(),
                                      [](const KindGroup& entry) { return entry.sharing.source == CommSource::world; });
  if (world_used) {
    groups[0].resize(static_cast<std::size_t>(layout.world_size()));
    std::iota(groups[0].begin(), groups[0].end(), std::int64_t{0});
  }
  std::vector<std::optional<std::size_t>> entry_of(created.size());
  bool alone_used = false;
  for (std::size_t kind = 0; kind < created.size(); ++kind) {
    const KindGroup& entry = created[kind];
    if (entry.sharing.source == CommSource::own) {
      entry_of[kind] = groups.size();
      groups.push_back(entry.member ? layout.group_of(global_rank, kind) : std::vector<std::int64_t>{});
    } else if (entry.sharing.source == CommSource::singleton && entry.member) {
      alone_used = true;
    }
  }
  const std::size_t alone = groups.size();
  groups.push_back(alone_used ? std::vector<std::int64_t>{global_rank} : std::vector<std::int64_t>{});
  for (std::size_t kind = 0; kind < created.size(); ++kind) {
    if (created[kind].sharing.source == CommSource::singleton && created[kind].member) entry_of[kind] = alone;
  }

  const std::vector<std::shared_ptr<::gloo::Context>> contexts =
      gloo::connect_groups(bootstrap, process_environment, groups, timeout);
  world = contexts[0];
  for (std::size_t kind = 0; kind < created.size(); ++kind) {
    if (entry_of[kind]) created[kind].gloo = contexts[*entry_of[kind]];
    if (created[kind].sharing.source == CommSource::world) created[kind].gloo = world;
  }
  // A sharing kind takes its owner's, whichever index the owner has.
  for (KindGroup& entry : created) {
    if (entry.sharing.source == CommSource::shared) entry.gloo = created[entry.sharing.owner].gloo;
  }
}

}  // namespace pgroups::detail
