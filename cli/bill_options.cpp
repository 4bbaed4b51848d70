#include "bill_options.hpp"

namespace pgroups::cli {

void add_bill_options(CLI::App& app, report::BillOptions& options) {
  app.add_option("--backend", options.backend,
                 "Backend to count communicators for: mpi, or nccl (adds estimated_nccl_mib, a model)")
      ->check(CLI::IsMember({"mpi", "nccl"}));
  app.add_flag("--no-share", options.no_share, "Count one communicator per kind, none shared (as verify --no-share)");
}

}  // namespace pgroups::cli
