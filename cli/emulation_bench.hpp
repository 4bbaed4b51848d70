#pragma once
// `pgroups bench --emulate N`: one process plays N ranks' store traffic of the creation
// against a store server (pgroups' own in a process of its own, or --store HOST:PORT such
// as torch's TCPStore), and reports what the store saw (pgroups/emulation.hpp).

#include <cstdint>
#include <optional>
#include <string>

#include "plan_options.hpp"

namespace pgroups::cli {

struct EmulationBenchOptions {
  std::optional<std::int64_t> ranks;             // --emulate
  std::string store;                              // --store HOST:PORT, or empty: pgroups' server
  std::optional<std::int64_t> ranks_per_client;   // --relay; chosen when absent
  bool new_group_loop = false;                    // --loop: torch's new_group loop instead of pgroups'
  std::optional<std::int64_t> loop_groups;        // --loop-groups: the first groups only, the rest extrapolated
};

/// Runs the emulation of `plan` at `options.ranks` ranks with `backend` ("gloo" or "nccl")
/// and prints the report in `format`; the exit status.
int run_emulation_bench(const EmulationBenchOptions& options, const PlanOptions& plan, const std::string& backend,
                        const std::string& format);

}  // namespace pgroups::cli
