// `pgroups place`: the cheapest placement of a mesh on a cluster among those a user writes
// by hand, its cost against the plain mesh order, and the files launchers take.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "output.hpp"
#include "output_file.hpp"
#include "pgroups/common/environment.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/config/cluster_reader.hpp"
#include "pgroups/config/cluster_source.hpp"
#include "pgroups/layout/placement.hpp"
#include "pgroups/report/locality_report.hpp"
#include "pgroups/report/placement_report.hpp"
#include "plan_options.hpp"
#include "plan_picture.hpp"
#include "subcommand.hpp"

namespace pgroups::cli {

Subcommand add_place_command(CLI::App& parent) {
  struct Options {
    PlanOptions plan;
    std::string format = "text";
    std::optional<std::string> cluster_file;
    std::optional<std::string> slurm_topology;
    std::optional<std::string> nodelist;
    std::optional<std::string> traffic;
    std::optional<std::string> level_costs;
    std::optional<std::string> rankfile;
    std::optional<std::string> hostfile;
    std::optional<std::string> svg_file;
    std::optional<std::string> html_file;
  };
  auto options = std::make_shared<Options>();
  CLI::App* app = parent.add_subcommand(
      "place", "Choose where each mesh rank runs on a cluster: a rank map and its cost per level (no communication)");
  options->plan.add_to(*app);
  options->plan.add_gpus_per_node_to(*app);
  app->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  auto* cluster = app->add_option("--cluster", options->cluster_file,
                                  "Cluster file (.toml, .json, .py) with a [cluster] table: gpus_per_node, nodes, "
                                  "node_cost, levels, traffic");
  auto* slurm = app->add_option("--slurm-topology", options->slurm_topology,
                                "Slurm topology.conf (tree or block plugin); with --nodelist and --gpus-per-node");
  cluster->excludes(slurm);
  // Which options apply to which source of the cluster is declared here, once: CLI11
  // refuses the others (a usage error naming both) instead of ignoring them.
  app->add_option("--nodelist", options->nodelist,
                  "The job's hosts in launch order, in Slurm's host-list syntax (default: SLURM_JOB_NODELIST)")
      ->needs(slurm);
  app->add_option("--traffic", options->traffic, "Relative bytes per kind, e.g. tp=8,dp=1 (over the cluster's)");
  app->add_option("--level-costs", options->level_costs,
                  "Cost per byte of each level of a topology.conf, e.g. node=1,switch1=4 (default: doubling)")
      ->needs(slurm);
  // A cluster file says how many GPUs a node holds; --gpus-per-node is topology.conf's.
  app->get_option("--gpus-per-node")->excludes(cluster);
  app->add_option("--rankfile", options->rankfile, "Also write an Open MPI rankfile that runs the placement to FILE");
  app->add_option("--hostfile", options->hostfile,
                  "Also write a Slurm hostfile (srun --distribution=arbitrary) that runs the placement to FILE");
  app->add_option("--svg", options->svg_file,
                  "Also write a picture of the placement as SVG to FILE: the levels as nested outlines, the groups "
                  "crossing each marked");
  app->add_option("--html", options->html_file, "Also write the picture as a self-contained HTML page to FILE");
  return {app, [options] {
            std::vector<NamedFile> outputs;
            if (options->rankfile) outputs.push_back({"--rankfile", *options->rankfile});
            if (options->hostfile) outputs.push_back({"--hostfile", *options->hostfile});
            if (options->svg_file) outputs.push_back({"--svg", *options->svg_file});
            if (options->html_file) outputs.push_back({"--html", *options->html_file});
            std::vector<NamedFile> inputs = options->plan.input_files();
            if (options->cluster_file) inputs.push_back({"--cluster", *options->cluster_file});
            if (options->slurm_topology) inputs.push_back({"--slurm-topology", *options->slurm_topology});
            check_outputs(outputs, inputs);
            const ParallelConfig config = options->plan.resolve();
            const Layout layout(config);
            const Cluster described = describe_cluster(layout,
                                                       {options->cluster_file, options->slurm_topology,
                                                        options->nodelist, options->level_costs, options->traffic},
                                                       process_environment);
            const PlacementResult result = place(layout, described);
            std::vector<std::int64_t> map;
            const bool drawn = options->svg_file || options->html_file;
            if (options->rankfile || options->hostfile || drawn)
              map = placement_rank_map(layout, described, result.best);
            std::string svg;
            std::string html;
            if (drawn) {
              // The placed plan, nodes and levels as the launcher numbers them.
              ParallelConfig placed = config;
              placed.rank_map = map;
              placed.gpus_per_node = described.gpus_per_node;
              const Layout drawn_layout(placed);
              std::vector<PictureLevel> levels;
              for (const ClusterLevel& level : described.levels) {
                std::vector<std::int64_t> units = level_unit_of_ranks(described, level);
                // The plan may use fewer ranks than the cluster holds.
                units.resize(static_cast<std::size_t>(drawn_layout.world_size()));
                levels.push_back({level.name, std::move(units)});
              }
              const auto locality = report::planned_locality(drawn_layout);
              if (options->svg_file) svg = plan_svg(drawn_layout, locality, levels);
              if (options->html_file) html = plan_html(drawn_layout, locality, levels);
            }
            const std::string rankfile = options->rankfile ? report::openmpi_rankfile(described, map) : std::string();
            const std::string hostfile = options->hostfile ? report::slurm_hostfile(described, map) : std::string();
            const std::string out = options->format == "json"
                                        ? report::placement_json(layout, described, result).dump() + '\n'
                                        : report::placement_text(layout, described, result);
            if (options->rankfile) write_file({"--rankfile", *options->rankfile}, rankfile);
            if (options->hostfile) write_file({"--hostfile", *options->hostfile}, hostfile);
            if (options->svg_file) write_file({"--svg", *options->svg_file}, svg);
            if (options->html_file) write_file({"--html", *options->html_file}, html);
            write_output(out);
            return 0;
          }};
}

}  // namespace pgroups::cli
