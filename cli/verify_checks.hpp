#pragma once
// What `pgroups verify` checks, whichever transport the job runs on: its options, one
// rank's observation of one kind's communicator, and the judgement of it against the layout.

#include <optional>
#include <string>
#include <vector>

#include "mpi_options.hpp"
#include "output.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/layout/creation_strategy.hpp"
#include "pgroups/report/locality_report.hpp"
#include "pgroups/report/verify_report.hpp"
#include "plan_options.hpp"

namespace pgroups::cli {

struct VerifyOptions {
  PlanOptions plan;
  std::string strategy{strategy_name(kDefaultCreationStrategy)};
  std::string backend = "mpi";
  std::string bootstrap = "auto";
  bool no_share = false;
  std::string format = "text";
  MpiOptions mpi;  // --timeout and the --inject-* testing flags
};

// What one rank saw of one group kind's communicator (nothing, outside every group of a
// partial kind such as Megatron's embd: rank -1, size 0).
struct Observation {
  int rank = -1;
  int size = 0;
  std::vector<int> members;
  bool ok = false;
};

/// `seen` with `ok` set: whether the communicator's size, this rank's rank in it and its
/// members (global ranks by local rank) are the layout's. A mismatch is printed on stderr,
/// naming the rank, the kind and both pictures.
[[nodiscard]] Observation judged(const ParallelContext& context, const KindHandle& handle, Observation seen);

/// What every rank must hold alike beyond the configuration, strategy and backend (which
/// the context agrees on itself): the flags that decide which collectives run after
/// creation. --format json gathers every group on rank 0, text does not.
[[nodiscard]] std::string agreed_settings(const VerifyOptions& options);

/// The distinct groups among every rank's members (empty ones left out), sorted by first rank.
[[nodiscard]] std::vector<std::vector<int>> distinct_groups(const std::vector<std::vector<int>>& members_by_rank);

/// Rank 0's report of a verify run (text or JSON), with the job's nodes and, where Slurm
/// told every rank its place in the switch tree, the switch levels; then the locality
/// warnings on stderr. A failed write is returned, not thrown: it is rank 0's alone.
[[nodiscard]] std::optional<IoError> write_verify_report(const report::VerifyRun& run, const report::LiveNodes& nodes,
                                                         bool json);

}  // namespace pgroups::cli
