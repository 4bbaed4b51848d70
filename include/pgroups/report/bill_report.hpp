#pragma once
/// \file
/// The communicator bill (docs/using/context.md, "Communicator economy") as `plan`, `explain` and Python show it: what
/// a layout costs per rank in communicators, and for NCCL an estimate of their memory, computed from the layout alone
/// (pgroups/layout/communicator_sharing.hpp), at any world size.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "pgroups/layout/layout.hpp"

namespace pgroups::report {

struct BillOptions {
  /// "mpi" or "nccl" (the CLI's --backend checks it).
  std::string backend = "mpi";
  /// One communicator per kind, none shared (verify --no-share).
  bool no_share = false;
};

/// {"kinds": K, "distinct": D, "singletons": S, "created": C}, with backend nccl also
/// "nccl_created"; for `rank`, or the largest per-rank figures (rank 0's) when absent.
[[nodiscard]] nlohmann::json communicators_json(const Layout& layout, const BillOptions& options,
                                                std::optional<std::int64_t> rank = std::nullopt);
/// Adds "communicators" to `json`, and with backend nccl "estimated_nccl_mib" (a number)
/// and "estimated_nccl" (how it was reached, labelled an estimate).
void add_bill_json(nlohmann::json& json, const Layout& layout, const BillOptions& options,
                   std::optional<std::int64_t> rank = std::nullopt);
/// "communicators: kinds 7, distinct 3, ..." and, with NCCL, the estimate's line.
[[nodiscard]] std::string bill_text(const Layout& layout, const BillOptions& options,
                                    std::optional<std::int64_t> rank = std::nullopt);

}  // namespace pgroups::report
