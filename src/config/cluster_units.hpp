#pragma once
// The units of a cluster's levels given as host names, and the one check both cluster
// readers end in: the [cluster] table's host lists (cluster_reader.cpp) and the switches and
// blocks of Slurm's topology.conf (slurm_topology_reader.cpp). Internal to pgroups::config.

#include <string>
#include <vector>

#include "pgroups/layout/cluster.hpp"

namespace pgroups::detail {

// A level whose units are given as host names: the [cluster] table's host lists, or the
// switches and blocks of a topology.conf.
struct UnitLevel {
  std::string name;
  double cost = 1;
  std::vector<std::vector<std::string>> units;
  std::vector<std::string> unit_names;  // for messages: "unit 2", "switch s1"
  std::string where;                    // "file:line: levels[0]" for messages
};

/// Sets `cluster`'s levels (and the nodes' topological order) from `levels`, innermost
/// first. ParseError naming the level and the unit for a host in no unit or in two units of
/// one level, units holding different numbers of the job's nodes, or a unit that straddles
/// two of the level above; `skip_foreign_hosts` leaves out hosts that are not the job's (a
/// topology.conf describes the whole cluster). O(levels × hosts × log hosts).
void apply_unit_levels(Cluster& cluster, const std::vector<UnitLevel>& levels, bool skip_foreign_hosts);

}  // namespace pgroups::detail
