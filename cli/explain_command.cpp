// `pgroups explain --rank R`: one rank's coordinates and groups, computed without
// enumerating the world, so it answers at once for any world size.

#include <memory>

#include "integer_option.hpp"
#include "output.hpp"
#include "plan_options.hpp"
#include "plan_output.hpp"
#include "subcommand.hpp"

namespace pgroups::cli {

Subcommand add_explain_command(CLI::App& parent) {
  struct Options {
    PlanOptions plan;
    std::int64_t rank = 0;
    std::string format = "text";
  };
  auto options = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand("explain", "Show one rank's coordinates and its group in every mode");
  options->plan.add_to(*app);
  add_integer_option(*app, "-r,--rank", options->rank, "Global rank to explain")->required();
  app->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  return {app, [options] {
            const Layout layout(options->plan.resolve());
            if (options->format == "json") {
              write_output(explain_json(layout, options->rank).dump(1) + '\n');
            } else {
              write_output(explain_text(layout, options->rank));
            }
            return 0;
          }};
}

}  // namespace pgroups::cli
