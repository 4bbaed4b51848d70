#include "verify_checks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "pgroups/report/switch_locality.hpp"
#include "print_warnings.hpp"

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

std::optional<IoError> write_verify_report(const report::VerifyRun& run, const report::LiveNodes& nodes, bool json) {
  const report::LocalityReport locality = report::observed_locality(run.layout, nodes.node_of_rank);
  const std::vector<report::SwitchLevelLocality> switches = report::switch_locality(
      run.layout, nodes.topology_address, nodes.launcher.topology_pattern.value_or(std::string()));
  try {
    if (json) {
      nlohmann::json out = report::verify_report_json(run);
      out["nodes"] = report::live_nodes_json(nodes, locality);
      out["nodes"]["switch_levels"] = report::switch_locality_json(switches);
      write_output(out.dump() + '\n');
    } else {
      write_output(report::verify_report_text(run) + '\n' + report::live_nodes_text(nodes, locality) +
                   report::switch_locality_text(switches));
    }
  } catch (const IoError& error) {
    return error;
  }
  print_warnings(report::locality_report_warnings(run.layout, locality));
  print_warnings(report::switch_locality_warnings(switches));
  return std::nullopt;
}

}  // namespace pgroups::cli
