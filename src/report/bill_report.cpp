#include "pgroups/report/bill_report.hpp"

#include <fmt/format.h>

#include "pgroups/cost/nccl_memory.hpp"
#include "pgroups/layout/communicator_sharing.hpp"

namespace pgroups::report {
namespace {

std::int64_t rank_of(std::optional<std::int64_t> rank) { return rank.value_or(0); }

}  // namespace

nlohmann::json communicators_json(const Layout& layout, const BillOptions& options, std::optional<std::int64_t> rank) {
  // Rank 0 holds the largest figures (largest_communicator_bill).
  const CommunicatorBill bill = communicator_bill(layout, rank_of(rank), !options.no_share);
  nlohmann::json out = {
      {"kinds", bill.kinds}, {"distinct", bill.distinct}, {"singletons", bill.singletons}, {"created", bill.created}};
  if (options.backend == "nccl") out["nccl_created"] = bill.created;
  return out;
}

void add_bill_json(nlohmann::json& json, const Layout& layout, const BillOptions& options,
                   std::optional<std::int64_t> rank) {
  json["communicators"] = communicators_json(layout, options, rank);
  if (options.backend != "nccl") return;
  const NcclEstimate estimate = estimate_nccl_memory(layout, rank_of(rank), !options.no_share);
  json["estimated_nccl_mib"] = estimate.mib;
  json["estimated_nccl"] = {{"estimate", true},
                            {"communicators", estimate.communicators},
                            {"intra_node", estimate.intra_node},
                            {"inter_node", estimate.inter_node},
                            {"model",
                             "per communicator: 512 MiB for one rank (nccl#2363), 544 MB for 2 ranks, "
                             "688 MB for more (nccl#964, A100); docs/developing/performance.md"}};
}

std::string bill_text(const Layout& layout, const BillOptions& options, std::optional<std::int64_t> rank) {
  const CommunicatorBill bill = communicator_bill(layout, rank_of(rank), !options.no_share);
  std::string out =
      fmt::format("communicators{}: {}{}{}\n", rank ? "" : " (largest per rank)", bill_text(bill),
                  options.backend == "nccl" ? " (MPI; as many NCCL)" : "", options.no_share ? ", sharing off" : "");
  if (options.backend == "nccl") {
    const NcclEstimate estimate = estimate_nccl_memory(layout, rank_of(rank), !options.no_share);
    out += fmt::format(
        "estimated NCCL memory: {:.0f} MiB per rank ({} communicators, {} within a node, {} across "
        "nodes; a model, see docs/developing/performance.md)\n",
        estimate.mib, estimate.communicators, estimate.intra_node, estimate.inter_node);
  }
  return out;
}

}  // namespace pgroups::report
