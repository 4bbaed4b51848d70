#include "verify_device.hpp"

#include <fmt/format.h>

#include <array>

#include "pgroups/mpi/error.hpp"

namespace pgroups::cli {

DeviceCheck check_device_groups(MPI_Comm world, int rank, int size, ParallelContext& context) {
  DeviceCheck result;
  for (const DeviceGroupCheck& sum : context.check_device_groups()) {
    if (!sum.ok()) {
      result.ok_here = false;
      fmt::print(stderr,
                 "pgroups verify: rank {}, mode {}: ncclAllReduce of the global ranks gave {}; the layout's group sums "
                 "to {}\n",
                 rank, mode_name(sum.mode), sum.actual, sum.expected);
    }
    DeviceModeReport report;
    report.mode = sum.mode;
    const double seconds = context.device_creation_seconds(sum.mode);
    mpi::check(MPI_Reduce(&seconds, &report.create_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, world), "MPI_Reduce");
    const std::array<std::int64_t, 2> mine = {sum.expected, sum.actual};
    std::vector<std::int64_t> all(rank == 0 ? 2 * static_cast<std::size_t>(size) : 0);
    mpi::check(MPI_Gather(mine.data(), 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, 0, world), "MPI_Gather");
    for (std::size_t at = 0; at < all.size(); at += 2) {
      report.expected.push_back(all[at]);
      report.actual.push_back(all[at + 1]);
      report.ok = report.ok && all[at] == all[at + 1];
    }
    result.reports.push_back(std::move(report));
  }
  return result;
}

nlohmann::json device_report_json(const DeviceModeReport& report) {
  return {{"ok", report.ok},
          {"create_seconds", report.create_seconds},
          {"rank_sum", report.actual},
          {"expected_rank_sum", report.expected}};
}

}  // namespace pgroups::cli
