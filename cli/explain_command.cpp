// `pgroups explain --rank R`: one rank's coordinates and groups, computed without
// enumerating the world, so it answers at once for any world size.

#include <memory>

#include "bill_options.hpp"
#include "integer_option.hpp"
#include "output.hpp"
#include "pgroups/config/config_json.hpp"
#include "pgroups/report/bill_report.hpp"
#include "pgroups/report/locality_report.hpp"
#include "pgroups/report/plan_report.hpp"
#include "pgroups/report/recovery_report.hpp"
#include "plan_options.hpp"
#include "print_warnings.hpp"
#include "recovery_options.hpp"
#include "subcommand.hpp"

namespace pgroups::cli {

Subcommand add_explain_command(CLI::App& parent) {
  struct Options {
    PlanOptions plan;
    std::int64_t rank = 0;
    std::string format = "text";
    report::BillOptions bill;  // the communicator bill's flags
    RecoveryOptions recovery;
  };
  auto options = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("explain", "Show one rank's coordinates and its group in every kind");
  options->plan.add_to(*app);
  add_integer_option(*app, "-r,--rank", options->rank, "Global rank to explain")->required();
  app->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  options->plan.add_gpus_per_node_to(*app);
  add_bill_options(*app, options->bill);
  options->recovery.add_to(*app);
  return {app, [options] {
            const Layout planned(options->plan.resolve());
            const std::optional<Recovery> recovery = options->recovery.resolve(planned);
            if (recovery) {
              // -r names an old rank: its fate, then its answers in the survivors' layout.
              const std::int64_t old_rank = options->rank;
              const std::optional<std::int64_t> new_rank = recovery->new_rank(old_rank);
              if (options->format == "json") {
                nlohmann::json json = new_rank ? report::explain_json(recovery->layout(), *new_rank)
                                               : nlohmann::json{{"schema_version", report::kSchemaVersion},
                                                                {"config", config_json(recovery->layout())}};
                json["recovery"] = report::recovery_rank_json(*recovery, old_rank);
                if (new_rank) report::add_bill_json(json, recovery->layout(), options->bill, *new_rank);
                write_output(json.dump(1) + '\n');
              } else {
                std::string text = report::recovery_rank_text(*recovery, old_rank);
                if (new_rank) {
                  text += '\n' + report::explain_text(recovery->layout(), *new_rank);
                  text += '\n' + report::bill_text(recovery->layout(), options->bill, *new_rank);
                }
                write_output(text);
              }
              return 0;
            }
            const Layout& layout = planned;
            const std::optional<report::LocalityReport> locality = report::planned_locality(layout);
            if (options->format == "json") {
              nlohmann::json json = report::explain_json(layout, options->rank);
              if (locality) json["node"] = report::node_json(locality->nodes, options->rank);
              report::add_bill_json(json, layout, options->bill, options->rank);
              write_output(json.dump(1) + '\n');
            } else {
              std::string text = report::explain_text(layout, options->rank);
              if (locality) text += '\n' + report::node_text(locality->nodes, options->rank) + '\n';
              text += '\n' + report::bill_text(layout, options->bill, options->rank);
              write_output(text);
            }
            if (locality) print_warnings(report::locality_report_warnings(layout, *locality));
            return 0;
          }};
}

}  // namespace pgroups::cli
