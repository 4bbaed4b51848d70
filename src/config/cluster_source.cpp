#include "pgroups/config/cluster_source.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/config/cluster_reader.hpp"
#include "pgroups/layout/placement.hpp"

namespace pgroups {
namespace {

Cluster from_cluster_file(const std::filesystem::path& path, const ParallelConfig& config) {
  Cluster cluster = read_cluster_file(path);
  if (config.gpus_per_node && *config.gpus_per_node != cluster.gpus_per_node) {
    throw ConfigError(
        fmt::format("the configuration's gpus_per_node {} is not the cluster file's {}: the cluster file says how "
                    "many GPUs a node holds (leave gpus_per_node out, or make them equal)",
                    *config.gpus_per_node, cluster.gpus_per_node));
  }
  return cluster;
}

Cluster from_slurm_topology(const ClusterSource& source, const ParallelConfig& config,
                            const EnvironmentLookup& environment) {
  if (!config.gpus_per_node) {
    throw ConfigError(
        "--slurm-topology needs --gpus-per-node G (topology.conf does not say how many GPUs a node holds)");
  }
  std::string list;
  if (source.nodelist) {
    list = *source.nodelist;
  } else if (auto from_environment = environment_text(environment, "SLURM_JOB_NODELIST")) {
    list = std::move(*from_environment);
  } else {
    throw ConfigError("--slurm-topology needs the job's hosts: give --nodelist or set SLURM_JOB_NODELIST");
  }
  const auto costs =
      source.level_costs ? parse_traffic(*source.level_costs) : std::vector<std::pair<std::string, double>>{};
  return read_slurm_topology(*source.slurm_topology, expand_host_list(list), *config.gpus_per_node, costs);
}

}  // namespace

Cluster describe_cluster(const Layout& layout, const ClusterSource& source, const EnvironmentLookup& environment) {
  if (source.cluster_file && source.slurm_topology) {
    throw ConfigError("a cluster is described by a cluster file or by Slurm's topology.conf, not both");
  }
  if (!source.slurm_topology && (source.nodelist || source.level_costs)) {
    throw ConfigError("--nodelist and --level-costs describe topology.conf's cluster: give them with --slurm-topology");
  }
  Cluster cluster;
  if (source.cluster_file) {
    cluster = from_cluster_file(*source.cluster_file, layout.config());
  } else if (source.slurm_topology) {
    cluster = from_slurm_topology(source, layout.config(), environment);
  } else {
    throw ConfigError("pgroups place needs a cluster: give --cluster FILE or --slurm-topology FILE");
  }
  if (source.traffic) cluster = with_job_traffic(std::move(cluster), layout, parse_traffic(*source.traffic));
  return cluster;
}

}  // namespace pgroups
