// Placement on a cluster (pgroups/layout/placement.hpp) with the cluster described by the
// same rules as `pgroups place` (pgroups/config/cluster_source.hpp): pgroups.place's one
// crossing. Its JSON is the CLI's, printed by the same function.

#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "pgroups/common/environment.hpp"
#include "pgroups/config/cluster_source.hpp"
#include "pgroups/layout/placement.hpp"
#include "pgroups/report/placement_report.hpp"

namespace py = pybind11;

namespace pgroups::python {
namespace {

// One placed job: the cluster it was placed on, the search's answer and the rank map that
// realizes it.
struct PlacedJob {
  Layout layout;
  Cluster cluster;
  PlacementResult result;
  std::vector<std::int64_t> rank_map;
};

PlacedJob place_job(const Layout& layout, ClusterSource source) {
  Cluster cluster = describe_cluster(layout, source, process_environment);
  PlacementResult result = place(layout, cluster);
  std::vector<std::int64_t> map = placement_rank_map(layout, cluster, result.best);
  return {layout, std::move(cluster), std::move(result), std::move(map)};
}

}  // namespace

void bind_placement(py::module_& m) {
  py::class_<PlacedJob>(m, "PlacedJob")
      .def_readonly("rank_map", &PlacedJob::rank_map)
      .def(
          "json",
          [](const PlacedJob& job, int indent) {
            return report::placement_json(job.layout, job.cluster, job.result).dump(indent);
          },
          py::arg("indent") = -1)
      .def("text", [](const PlacedJob& job) { return report::placement_text(job.layout, job.cluster, job.result); })
      .def("rankfile", [](const PlacedJob& job) { return report::openmpi_rankfile(job.cluster, job.rank_map); })
      .def("hostfile", [](const PlacedJob& job) { return report::slurm_hostfile(job.cluster, job.rank_map); })
      // The plan as placed: its rank map, and the cluster's nodes.
      .def("placed_layout", [](const PlacedJob& job) {
        ParallelConfig placed = job.layout.config();
        placed.rank_map = job.rank_map;
        placed.gpus_per_node = job.cluster.gpus_per_node;
        return Layout(placed);
      });
  m.def(
      "place",
      [](const Layout& layout, std::optional<std::string> cluster, std::optional<std::string> slurm_topology,
         std::optional<std::string> nodelist, std::optional<std::string> level_costs,
         std::optional<std::string> traffic) {
        return place_job(layout, {cluster ? std::optional<std::filesystem::path>(*cluster) : std::nullopt,
                                  slurm_topology ? std::optional<std::filesystem::path>(*slurm_topology) : std::nullopt,
                                  std::move(nodelist), std::move(level_costs), std::move(traffic)});
      },
      py::arg("layout"), py::arg("cluster"), py::arg("slurm_topology"), py::arg("nodelist"), py::arg("level_costs"),
      py::arg("traffic"));
}

}  // namespace pgroups::python
