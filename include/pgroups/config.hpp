#pragma once
/// \file
/// Umbrella of the configuration layer (target pgroups::config): the readers of TOML, JSON
/// and Colossal-AI's Python configs, and the merge of flags over a file.

#include "pgroups/config/cluster_reader.hpp"  // IWYU pragma: export
#include "pgroups/config/cluster_source.hpp"  // IWYU pragma: export
#include "pgroups/config/config_json.hpp"  // IWYU pragma: export
#include "pgroups/config/config_merge.hpp"  // IWYU pragma: export
#include "pgroups/config/config_reader.hpp"  // IWYU pragma: export
#include "pgroups/config/rank_map_file.hpp"  // IWYU pragma: export
#include "pgroups/config/slurm_topology.hpp"  // IWYU pragma: export
