#include "verify_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "pgroups/mpi/check.hpp"

namespace pgroups::cli {

DeviceCheck check_device_groups(MPI_Comm world, int rank, int size, ParallelContext& context) {
  DeviceCheck result;
  // Every rank checks the communicators it holds; the gathers below run once per kind
  // on every rank, members or not, so that they stay collective over the world.
  const std::vector<GroupCheck> checks = context.check_device_groups();
  for (const KindHandle& handle : context.kinds()) {
    const std::string& group = handle.name();
    const auto held =
        std::find_if(checks.begin(), checks.end(), [&group](const GroupCheck& check) { return check.kind == group; });
    const bool member = held != checks.end();
    if (member && !held->ok()) {
      result.ok_here = false;
      fmt::print(stderr,
                 "pgroups verify: rank {}, group {}: ncclAllReduce of the global ranks gave {}; the layout's group "
                 "sums to {}\n",
                 rank, group, held->actual, held->expected);
    }
    DeviceKindReport report;
    report.kind = group;
    const double seconds = context.device_creation_seconds(handle);
    mpi::check(MPI_Reduce(&seconds, &report.create_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, world), "MPI_Reduce");
    const std::array<std::int64_t, 3> mine = {member ? held->expected : 0, member ? held->actual : 0, member ? 1 : 0};
    std::vector<std::int64_t> all(rank == 0 ? 3 * static_cast<std::size_t>(size) : 0);
    mpi::check(MPI_Gather(mine.data(), 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T, 0, world), "MPI_Gather");
    for (std::size_t at = 0; at < all.size(); at += 3) {
      if (all[at + 2] == 0) continue;  // no member of the kind
      report.expected.push_back(all[at]);
      report.actual.push_back(all[at + 1]);
      report.ok = report.ok && all[at] == all[at + 1];
    }
    result.reports.push_back(std::move(report));
  }
  return result;
}

}  // namespace pgroups::cli
