#pragma once
// The communicator bill's flags of `plan` and `explain` (docs/using/context.md, "Communicator economy"), as verify
// takes them.

#include <CLI/CLI.hpp>

#include "pgroups/report/bill_report.hpp"

namespace pgroups::cli {

/// Adds --backend (mpi or nccl) and --no-share to `app`, filling `options`.
void add_bill_options(CLI::App& app, report::BillOptions& options);

}  // namespace pgroups::cli
