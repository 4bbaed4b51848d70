#pragma once
/// \file
/// What `pgroups verify` prints once rank 0 has gathered every rank's view of its
/// communicators: pure functions of plain values, so that the report is tested and read
/// without MPI (the CLI gathers, cli/verify_command.cpp; the report layer shows).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups::report {

/// Rank 0's picture of one group kind's MPI communicators.
struct VerifyKindReport {
  std::string kind;
  double create_seconds = 0.0;  ///< the slowest rank's
  bool ok = true;               ///< on every rank
  std::vector<int> local_ranks;  ///< by rank (-1 outside every group of a partial kind)
  std::vector<int> sizes;        ///< by rank (0 there)
  /// Distinct, sorted by first rank (non-members' empty ones left out); JSON only.
  std::vector<std::vector<int>> groups;
};

/// Rank 0's picture of one group kind's NCCL communicators.
struct VerifyDeviceReport {
  std::string kind;
  double create_seconds = 0.0;         ///< device part of the creation, slowest rank
  bool ok = true;                      ///< the sum matched on every rank
  std::vector<std::int64_t> expected;  ///< by rank
  std::vector<std::int64_t> actual;    ///< by rank
};

/// One verify run as rank 0 saw it.
struct VerifyRun {
  const Layout& layout;
  std::string_view strategy;
  /// "mpi" or "nccl".
  std::string_view backend;
  bool share_communicators = true;
  double create_seconds = 0.0;  ///< the slowest rank's, every kind
  /// Rank 0's bill, which holds every kind's largest figures.
  CommunicatorBill bill;
  std::vector<VerifyKindReport> kinds;
  std::vector<VerifyDeviceReport> device;  ///< empty without NCCL
  bool ok = true;                          ///< every check on every rank
};

/// {"ok", "create_seconds", "rank_sum", "expected_rank_sum"}: a kind's "nccl" entry.
[[nodiscard]] nlohmann::json verify_device_json(const VerifyDeviceReport& report);

/// {"schema_version", "config", "data_parallel_size", "kinds": {kind: {"groups", "local_rank",
/// "group_size", "ok", "create_seconds"[, "nccl"]}}, "ok", "strategy", "backend",
/// "create_seconds", "communicators", "share_communicators"}; the deprecated "modes" and
/// "world_size" repeat "kinds" and "group_size".
[[nodiscard]] nlohmann::json verify_report_json(const VerifyRun& run);

/// A heading (the configuration, strategy and bill), a table headed `kind` with per kind
/// its group count, size, creation time and check, and the verdict line.
[[nodiscard]] std::string verify_report_text(const VerifyRun& run);

}  // namespace pgroups::report
