#pragma once
/// \file
/// Readers of a cluster description (pgroups/layout/cluster.hpp) for `pgroups place`
/// (docs/using/placement.md):
///
///   TOML     [cluster]
///            gpus_per_node = 4
///            nodes = 36                      # or ["gpu01", "gpu02", ...] in launch order
///            node_cost = 1
///            levels = [{name = "nvl72", nodes = 18, cost = 8}]   # or nodes = [["gpu01", ...], ...]
///            traffic = {tp = 16, dp = 2}
///   JSON     {"cluster": {"gpus_per_node": 4, "nodes": 36, "levels": [...]}}
///   Python   cluster = dict(gpus_per_node=4, nodes=36, levels=[dict(name='nvl72', nodes=18, cost=8)])
///
/// and the host-list and traffic syntax the command line shares. Every error is a
/// ParseError or ConfigError naming the file, the line (and column where known) and the
/// field. Slurm's topology.conf has its reader in pgroups/config/slurm_topology.hpp
/// (included here, where it used to be declared).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pgroups/config/config_reader.hpp"
#include "pgroups/config/slurm_topology.hpp"  // IWYU pragma: export
#include "pgroups/layout/cluster.hpp"

namespace pgroups {

/// The `cluster` table of a .toml, .json or .py file (which may hold `parallel` and `mesh`
/// too). ParseError for a missing table, an unknown key (with the closest known one), a
/// value of the wrong type, a host list given where nodes is a count, a host in no unit or
/// in two of one level, units of one level holding different numbers of nodes, or a unit
/// that straddles two units of the level above; then validate(Cluster)'s ConfigErrors,
/// prefixed with the file name.
[[nodiscard]] Cluster read_cluster_file(const std::filesystem::path& path);
[[nodiscard]] Cluster parse_cluster(std::string_view text, ConfigFormat format, std::string_view source = "<cluster>");

/// Slurm's host-list syntax: "gpu[01-03,07],login1" -> gpu01 gpu02 gpu03 gpu07 login1;
/// several bracket groups in one name multiply ("r[1-2]n[1-2]"), a range keeps its first
/// number's zero padding. ConfigError naming the text and the rule for an unclosed or empty
/// bracket, a range whose end is below its start or not a number, an empty name. At most
/// 2^20 names.
[[nodiscard]] std::vector<std::string> expand_host_list(std::string_view text);

/// `--traffic tp=8,dp=1`: kind names and relative bytes; ConfigError naming the entry for
/// one without '=', an empty name, a name given twice or a value that is no number >= 0.
[[nodiscard]] std::vector<std::pair<std::string, double>> parse_traffic(std::string_view text);

}  // namespace pgroups
