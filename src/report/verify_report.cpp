#include "pgroups/report/verify_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "pgroups/config/config_json.hpp"
#include "pgroups/report/plan_report.hpp"

namespace pgroups::report {
namespace {

// The NCCL check of `kind`, when there is one.
const VerifyDeviceReport* device_report_of(const std::vector<VerifyDeviceReport>& device, const std::string& kind) {
  const auto found = std::find_if(device.begin(), device.end(), [&kind](const auto& d) { return d.kind == kind; });
  return found == device.end() ? nullptr : &*found;
}

nlohmann::json communicators_json(const VerifyRun& run) {
  nlohmann::json out = {{"kinds", run.bill.kinds},
                        {"distinct", run.bill.distinct},
                        {"singletons", run.bill.singletons},
                        {"created", run.bill.created}};
  if (run.backend == "nccl") out["nccl_created"] = run.bill.created;
  return out;
}

}  // namespace

nlohmann::json verify_device_json(const VerifyDeviceReport& report) {
  return {{"ok", report.ok},
          {"create_seconds", report.create_seconds},
          {"rank_sum", report.actual},
          {"expected_rank_sum", report.expected}};
}

nlohmann::json verify_report_json(const VerifyRun& run) {
  nlohmann::json kinds = nlohmann::json::object();
  for (const VerifyKindReport& report : run.kinds) {
    nlohmann::json& entry = kinds[report.kind];
    entry = {{"groups", report.groups},
             {"local_rank", report.local_ranks},
             {"group_size", report.sizes},
             {"world_size", report.sizes},
             {"ok", report.ok},
             {"create_seconds", report.create_seconds}};
    if (const VerifyDeviceReport* checked = device_report_of(run.device, report.kind)) {
      entry["nccl"] = verify_device_json(*checked);
    }
  }
  return {{"schema_version", kSchemaVersion},
          {"config", config_json(run.layout.config())},
          {"data_parallel_size", run.layout.data_parallel_size()},
          {"kinds", kinds},
          {"modes", kinds},
          {"ok", run.ok},
          {"strategy", run.strategy},
          {"backend", run.backend},
          {"create_seconds", run.create_seconds},
          {"communicators", communicators_json(run)},
          {"share_communicators", run.share_communicators}};
}

std::string verify_report_text(const VerifyRun& run) {
  const Layout& layout = run.layout;
  const bool nccl = run.backend == "nccl";
  std::string out = fmt::format("pgroups verify: {} (data {}), strategy {}{}\n", describe(layout.config()),
                                layout.data_parallel_size(), run.strategy, nccl ? ", backend nccl" : "");
  const CommunicatorBill& bill = run.bill;
  const std::string kinds_text = fmt::format("{} kinds, {} distinct, {} singletons{}", bill.kinds, bill.distinct,
                                             bill.singletons, run.share_communicators ? "" : ", sharing off");
  out += nccl ? fmt::format("created {} MPI and {} NCCL communicators per rank ({}) in {:.6f} s (slowest rank)\n\n",
                            bill.created, bill.created, kinds_text, run.create_seconds)
              : fmt::format("created {} communicators per rank ({}) in {:.6f} s (slowest rank)\n\n", bill.created,
                            kinds_text, run.create_seconds);
  // With NCCL, "create (s)" covers both communicators of a mode, "nccl (s)" the NCCL one.
  out += fmt::format("{:<20} {:>8} {:>8} {:>12}  {}\n", "kind", "groups", "size", "create (s)",
                     nccl ? fmt::format("{:<5} {:>10}  {}", "check", "nccl (s)", "nccl sum") : "check");
  std::size_t failed = 0;
  for (const VerifyKindReport& report : run.kinds) {
    const VerifyDeviceReport* checked = device_report_of(run.device, report.kind);
    const std::size_t kind = layout.group_kind_index(report.kind);
    const bool mode_ok = report.ok && (checked == nullptr || checked->ok);
    failed += mode_ok ? 0 : 1;
    const std::string_view check_text = report.ok ? "OK" : "FAIL";
    out += fmt::format("{:<20} {:>8} {:>8} {:>12.6f}  {}\n", report.kind, layout.group_count(kind),
                       layout.group_size(kind), report.create_seconds,
                       checked != nullptr ? fmt::format("{:<5} {:>10.6f}  {}", check_text, checked->create_seconds,
                                                        checked->ok ? "OK" : "FAIL")
                                          : std::string(check_text));
  }
  // One word for a preset's modes and a mesh's group tokens alike.
  const std::string_view kinds = "group kinds";
  out += run.ok ? fmt::format("\nOK: every communicator of {} {} matches the layout on all {} ranks{}\n",
                              run.kinds.size(), kinds, layout.world_size(), nccl ? " (MPI and NCCL)" : "")
                : fmt::format("\nFAIL: {} of {} {} differ from the layout (details on stderr)\n", failed,
                              run.kinds.size(), kinds);
  return out;
}

}  // namespace pgroups::report
