#pragma once
/// \file
/// Where a job's cluster comes from, and the rules that make one description of it for a
/// plan (`pgroups place`, Python's `pgroups.place`): a cluster file, or Slurm's
/// topology.conf with the job's hosts, then the job's own traffic over the cluster's.

#include <filesystem>
#include <optional>
#include <string>

#include "pgroups/common/environment.hpp"
#include "pgroups/layout/cluster.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups {

/// The inputs of a cluster description, as `pgroups place` takes them.
struct ClusterSource {
  /// `--cluster FILE`: a .toml, .json or .py file's `cluster` table (cluster_reader.hpp).
  std::optional<std::filesystem::path> cluster_file;
  /// `--slurm-topology FILE`: Slurm's topology.conf (slurm_topology.hpp), used when there
  /// is no cluster file; it needs the plan's gpus_per_node and the job's hosts.
  std::optional<std::filesystem::path> slurm_topology;
  /// `--nodelist`: the job's hosts in Slurm's host-list syntax; SLURM_JOB_NODELIST when
  /// not given.
  std::optional<std::string> nodelist;
  /// `--level-costs switch=4,rest=16`: the cost of each topology.conf level.
  std::optional<std::string> level_costs;
  /// `--traffic tp=8,dp=1`: the job's own relative bytes per kind, over the cluster's
  /// (with_job_traffic: strict, a kind the plan does not build is refused).
  std::optional<std::string> traffic;
};

/// The cluster `layout` is placed on, from `source`, reading SLURM_JOB_NODELIST through
/// `environment` when the hosts are needed and not given. ConfigError naming the rule for:
/// no cluster file and no topology.conf, or both; hosts or level costs without
/// topology.conf; a configuration gpus_per_node that is not the
/// cluster file's; topology.conf without the plan's gpus_per_node or without the hosts;
/// and every error of the readers and of with_job_traffic. The nodes' GPUs come from the
/// cluster file, or from the plan for topology.conf.
[[nodiscard]] Cluster describe_cluster(const Layout& layout, const ClusterSource& source,
                                       const EnvironmentLookup& environment);

}  // namespace pgroups
