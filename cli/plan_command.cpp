// `pgroups plan`: every group of every mode for one configuration.

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bill_options.hpp"
#include "output.hpp"
#include "output_file.hpp"
#include "pgroups/report/bill_report.hpp"
#include "pgroups/report/locality_report.hpp"
#include "pgroups/report/plan_report.hpp"
#include "pgroups/report/recovery_report.hpp"
#include "plan_options.hpp"
#include "plan_picture.hpp"
#include "print_warnings.hpp"
#include "recovery_options.hpp"
#include "subcommand.hpp"

namespace pgroups::cli {
namespace {

void add_picture_options(CLI::App& app, std::optional<std::string>& svg_file, std::optional<std::string>& html_file) {
  app.add_option("--svg", svg_file, "Also write a picture of the plan as SVG to FILE");
  app.add_option("--html", html_file, "Also write the picture as a self-contained HTML page to FILE");
}

// The caller has checked the paths (check_outputs). Both pictures are drawn before
// either is written: a picture that cannot be drawn leaves no file behind.
void write_pictures(const Layout& layout, const std::optional<report::LocalityReport>& locality,
                    const std::optional<std::string>& svg_file, const std::optional<std::string>& html_file) {
  const std::string svg = svg_file ? plan_svg(layout, locality) : std::string();
  const std::string html = html_file ? plan_html(layout, locality) : std::string();
  if (svg_file) write_file({"--svg", *svg_file}, svg);
  if (html_file) write_file({"--html", *html_file}, html);
}

}  // namespace

Subcommand add_plan_command(CLI::App& parent) {
  struct Options {
    PlanOptions plan;
    std::string format = "text";
    std::optional<std::string> svg_file;
    std::optional<std::string> html_file;
    report::BillOptions bill;
    RecoveryOptions recovery;
  };
  auto options = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("plan", "Print every process group of a configuration (no communication)");
  options->plan.add_to(*app);
  app->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  options->plan.add_gpus_per_node_to(*app);
  add_picture_options(*app, options->svg_file, options->html_file);
  add_bill_options(*app, options->bill);
  options->recovery.add_to(*app);
  options->recovery.add_what_if_to(*app);
  options->recovery.add_resize_to(*app);
  return {app, [options] {
            // Outputs are checked against the inputs and each other before anything is read or written.
            std::vector<NamedFile> outputs;
            if (options->svg_file) outputs.push_back({"--svg", *options->svg_file});
            if (options->html_file) outputs.push_back({"--html", *options->html_file});
            std::vector<NamedFile> inputs = options->plan.input_files();
            check_outputs(outputs, inputs);
            const Layout planned(options->plan.resolve());
            // After a loss the plan shown is the survivors', its groups in new ranks.
            const std::optional<Recovery> recovery = options->recovery.resolve(planned);
            const std::optional<NodeLossWhatIf> what_if = options->recovery.what_if(planned);
            // After an elastic restart the plan shown is the resized one.
            const std::optional<Resize> resize = options->recovery.resize(planned);
            const Layout& layout = recovery ? recovery->layout() : resize ? resize->layout : planned;
            const std::optional<report::LocalityReport> locality = report::planned_locality(layout);
            write_pictures(layout, locality, options->svg_file, options->html_file);
            if (options->format == "json") {
              nlohmann::json json = report::plan_document_json(layout, locality, options->bill);
              if (recovery) json.update(report::recovery_json(*recovery, options->bill));
              if (what_if) json.update(report::what_if_json(layout, *what_if, options->bill));
              if (resize) json.update(report::resize_json(planned, *resize, options->recovery.resize_world()));
              write_output(json.dump() + '\n');
            } else {
              std::string text = report::plan_document_text(layout, locality, options->bill);
              if (recovery) text = report::recovery_text(*recovery, options->bill) + '\n' + text;
              if (what_if) text = report::what_if_text(layout, *what_if, options->bill) + '\n' + text;
              if (resize) text = report::resize_text(planned, *resize, options->recovery.resize_world()) + '\n' + text;
              write_output(text);
            }
            if (locality) print_warnings(report::locality_report_warnings(layout, *locality));
            return 0;
          }};
}

}  // namespace pgroups::cli
