#pragma once
// What the three binding files share: the configuration of Python's arguments, and the
// registration functions module.cpp calls. Group kinds (a preset's modes, a mesh's
// tokens) travel as their names; Python's ParallelMode is turned into its value first.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pgroups/layout/parallel_config.hpp"

namespace pgroups::python {

/// The configuration of Python's keyword arguments: the presets (pipeline, tensor, mode,
/// depth) or a mesh (dimensions fastest first) and its group kinds, by merge_config over
/// the defaults. Not validated here (Layout is), except merge_config's refusal of groups
/// without a mesh.
[[nodiscard]] ParallelConfig make_config(std::int64_t world_size, std::int64_t pipeline, std::int64_t tensor,
                                         const std::optional<std::string>& mode, std::optional<std::int64_t> depth,
                                         bool legacy_sequence_dp, std::int64_t seed,
                                         const std::optional<std::vector<std::pair<std::string, std::int64_t>>>& mesh,
                                         const std::vector<std::string>& groups);

void bind_layout(pybind11::module_& m);
void bind_context(pybind11::module_& m);
/// communicator_bill, communicator_sharing (issue 17).
void bind_bill(pybind11::module_& m);
/// RankView and PartitionKey (pgroups/layout/rank_view.hpp).
void bind_view(pybind11::module_& m);

}  // namespace pgroups::python
