#pragma once
// What the three binding files share: the mode names as Python passes them, and the
// registration functions module.cpp calls.

#include <pybind11/pybind11.h>

#include <string>

#include "pgroups/parallel_mode.hpp"

namespace pgroups::python {

/// The mode called `name` (Colossal-AI's value: "data", "2d_row", ...); ConfigError naming
/// the value and the known names otherwise. Python's ParallelMode enum is turned into its
/// value before it reaches C++.
[[nodiscard]] ParallelMode mode_of(const std::string& name);

void bind_layout(pybind11::module_& m);
void bind_context(pybind11::module_& m);

}  // namespace pgroups::python
