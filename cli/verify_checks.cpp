#include "verify_checks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <set>

namespace pgroups::cli {

Observation judged(const ParallelContext& context, const KindHandle& handle, Observation seen) {
  const Layout& layout = context.layout();
  const auto me = context.global_rank();
  const std::size_t kind = *handle.index();  // every kind of context.kinds() has one
  const std::vector<std::int64_t> expected = layout.group_of(me, kind);
  seen.ok = seen.size == static_cast<std::int64_t>(expected.size()) && seen.rank == layout.local_rank(me, kind) &&
            std::equal(seen.members.begin(), seen.members.end(), expected.begin(), expected.end());
  if (!seen.ok) {
    fmt::print(stderr,
               "pgroups verify: rank {}, group {}: the communicator has size {}, rank {}, members [{}]; the layout "
               "says size {}, local rank {}, members [{}]\n",
               me, handle.name(), seen.size, seen.rank, fmt::join(seen.members, ", "), expected.size(),
               layout.local_rank(me, kind), fmt::join(expected, ", "));
  }
  return seen;
}

std::string agreed_settings(const VerifyOptions& options) { return fmt::format("verify format={}", options.format); }

std::vector<std::vector<int>> distinct_groups(const std::vector<std::vector<int>>& members_by_rank) {
  std::set<std::vector<int>> distinct;
  for (const std::vector<int>& members : members_by_rank) {
    if (!members.empty()) distinct.insert(members);
  }
  // Groups of a kind partition the world; two observed groups with one first rank would
  // be a failure that the per-rank checks already caught.
  std::vector<std::vector<int>> groups(distinct.begin(), distinct.end());
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return groups;
}

}  // namespace pgroups::cli
