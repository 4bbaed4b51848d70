#pragma once
// The communicator bill (issue 17) in `plan` and `explain`: what a layout costs per rank
// in communicators, and with --backend nccl an estimate of their NCCL memory, computed
// from the layout alone (pgroups/communicator_sharing.hpp), at any world size.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "pgroups/layout.hpp"

namespace pgroups::cli {

struct BillOptions {
  std::string backend = "mpi";
  bool no_share = false;
  /// --backend (mpi or nccl) and --no-share, as verify takes them.
  void add_to(CLI::App& app);
};

/// {"kinds": K, "distinct": D, "singletons": S, "created": C}, with --backend nccl also
/// "nccl_created"; for `rank`, or the largest per-rank figures (rank 0's) when absent.
[[nodiscard]] nlohmann::json communicators_json(const Layout& layout, const BillOptions& options,
                                                std::optional<std::int64_t> rank = std::nullopt);
/// Adds "communicators" to `json`, and with --backend nccl "estimated_nccl_mib" (a number)
/// and "estimated_nccl" (how it was reached, labelled an estimate).
void add_bill_json(nlohmann::json& json, const Layout& layout, const BillOptions& options,
                   std::optional<std::int64_t> rank = std::nullopt);
/// "communicators: kinds 7, distinct 3, ..." and, with NCCL, the estimate's line.
[[nodiscard]] std::string bill_text(const Layout& layout, const BillOptions& options,
                                    std::optional<std::int64_t> rank = std::nullopt);

}  // namespace pgroups::cli
