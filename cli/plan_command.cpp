// `pgroups plan`: every group of every mode for one configuration.

#include <fmt/format.h>

#include <memory>

#include "output.hpp"
#include "plan_options.hpp"
#include "plan_output.hpp"
#include "subcommand.hpp"

namespace pgroups::cli {

Subcommand add_plan_command(CLI::App& parent) {
  struct Options {
    PlanOptions plan;
    std::string format = "text";
  };
  auto options = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("plan", "Print every process group of a configuration (no communication)");
  options->plan.add_to(*app);
  app->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  return {app, [options] {
            const Layout layout(options->plan.resolve());
            if (options->format == "json") {
              write_output(plan_json(layout).dump() + '\n');
            } else {
              write_output(plan_text(layout));
            }
            return 0;
          }};
}

}  // namespace pgroups::cli
