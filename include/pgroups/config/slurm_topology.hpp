#pragma once
/// \file
/// Slurm's topology.conf (docs/using/placement.md, "Slurm's topology.conf") read into a
/// cluster (pgroups/layout/cluster.hpp) for `pgroups place --slurm-topology`: the tree
/// plugin's SwitchName= lines or the block plugin's BlockName= lines, with the job's hosts.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pgroups/layout/cluster.hpp"

namespace pgroups {

/// The cluster of a Slurm topology.conf for the job's hosts (launch order): the tree plugin's
/// leaf switches (those with Nodes=) are level switch1, their parents switch2, ...; the block
/// plugin's blocks are level block. Level costs double from the node's 1 (switch1 2, switch2
/// 4; block 2) unless `level_costs` gives them (by level name, "node" included). Switches or
/// blocks holding none of the job's hosts are left out. ParseError "file:line: ..." naming
/// the field for an unknown line or field, a switch or block defined twice, Switches= naming
/// an undefined switch, a cycle, a host under two switches of one level, a bad host list; and
/// the unit errors of read_cluster_file.
[[nodiscard]] Cluster read_slurm_topology(const std::filesystem::path& path, const std::vector<std::string>& hosts,
                                          std::int64_t gpus_per_node,
                                          const std::vector<std::pair<std::string, double>>& level_costs = {});
[[nodiscard]] Cluster parse_slurm_topology(std::string_view text, std::string_view source,
                                           const std::vector<std::string>& hosts, std::int64_t gpus_per_node,
                                           const std::vector<std::pair<std::string, double>>& level_costs = {});

}  // namespace pgroups
