#pragma once
// What the binding files share: the registration functions module.cpp calls. Group kinds (a preset's modes, a mesh's
// tokens) travel as their names; Python's ParallelMode is turned into its value first.

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pgroups/layout/parallel_config.hpp"

namespace pgroups::python {

/// ParallelConfig, ConfigOverrides and the one crossing (config_bindings.cpp).
void bind_config(pybind11::module_& m);
void bind_layout(pybind11::module_& m);
void bind_context(pybind11::module_& m);
/// communicator_bill, communicator_sharing (docs/using/context.md, "Communicator economy").
void bind_bill(pybind11::module_& m);
/// RankView and PartitionKey (pgroups/layout/rank_view.hpp).
void bind_view(pybind11::module_& m);
void bind_recovery(pybind11::module_& m);
/// place and its PlacedJob (pgroups/layout/placement.hpp), for pgroups.place.
void bind_placement(pybind11::module_& m);
/// Protocols over a store of Python's: agree_on_attempt (pgroups/launch/attempt.hpp).
void bind_store(pybind11::module_& m);

}  // namespace pgroups::python
