// pgroups._pgroups: the C++ half of the Python package. The public API (pgroups.Plan,
// pgroups.ParallelContext, ...) is the pure-Python layer in python/pgroups, which gives it
// Colossal-AI's names, docstrings and the ParallelMode enum; this module stays a thin,
// name-for-name view of the C++ classes.

#include <string>

#include "bindings.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/layout/agreement_record.hpp"
#include "pgroups/layout/parallel_mode.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_pgroups, m) {
  m.doc() = "C++ core of pgroups; use the `pgroups` package, not this module.";
  // CMake's project(VERSION), the one version source: pgroups.__version__ is this, and
  // pyproject.toml reads the same line of CMakeLists.txt.
  m.attr("__version__") = PGROUPS_VERSION;

  // One Python class per C++ error class, with the same hierarchy; pybind11 tries the
  // translators latest first, so the subclasses are registered after their root.
  auto error = py::register_exception<pgroups::Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<pgroups::ConfigError>(m, "ConfigError", error);
  py::register_exception<pgroups::ParseError>(m, "ParseError", error);
  py::register_exception<pgroups::IoError>(m, "IoError", error);
  py::register_exception<pgroups::BackendError>(m, "BackendError", error);
  py::register_exception<pgroups::MismatchError>(m, "MismatchError", error);
  py::register_exception<pgroups::TimeoutError>(m, "TimeoutError", error);
  py::register_exception<pgroups::StateError>(m, "StateError", error);

  // An error carried from another rank whose class is Python's own (TypeError, ImportError,
  // ...): raised as that built-in class, so that every rank raises what the erring rank
  // raised; a class that is no built-in exception (a framework's own) is a RuntimeError.
  py::register_exception_translator([](std::exception_ptr caught) {
    try {
      if (caught) std::rethrow_exception(caught);
    } catch (const pgroups::CarriedError& carried) {
      PyObject* type = PyExc_RuntimeError;
      const py::object builtins = py::module_::import("builtins");
      if (py::hasattr(builtins, carried.kind().c_str())) {
        const py::object found = builtins.attr(carried.kind().c_str());
        if (PyType_Check(found.ptr()) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(found.ptr()),
                                                          reinterpret_cast<PyTypeObject*>(PyExc_Exception))) {
          type = found.ptr();  // a built-in, alive as long as the interpreter
        }
      }
      PyErr_SetString(type, carried.what());
    }
  });

  // The CLI's exit statuses (pgroups::ExitCode), by name: Python's watchdog ends a rank with
  // the one of a timeout, read here rather than restated.
  py::dict exit_codes;
  for (const auto& [name, code] :
       {std::pair{"ok", pgroups::ExitCode::ok}, std::pair{"internal", pgroups::ExitCode::internal},
        std::pair{"usage", pgroups::ExitCode::usage}, std::pair{"config", pgroups::ExitCode::config},
        std::pair{"parse", pgroups::ExitCode::parse}, std::pair{"io", pgroups::ExitCode::io},
        std::pair{"backend", pgroups::ExitCode::backend}, std::pair{"mismatch", pgroups::ExitCode::mismatch},
        std::pair{"timeout", pgroups::ExitCode::timeout}, std::pair{"state", pgroups::ExitCode::state},
        std::pair{"verify_failed", pgroups::ExitCode::verify_failed}}) {
    exit_codes[name] = static_cast<int>(code);
  }
  m.attr("exit_codes") = exit_codes;

  py::list names;
  for (pgroups::ParallelMode mode : pgroups::kAllParallelModes) names.append(std::string(pgroups::mode_name(mode)));
  m.attr("mode_names") = names;

  pgroups::python::bind_config(m);  // before Layout, whose constructor takes a ParallelConfig
  pgroups::python::bind_layout(m);
  pgroups::python::bind_context(m);
  pgroups::python::bind_bill(m);
  pgroups::python::bind_view(m);
  pgroups::python::bind_recovery(m);
  pgroups::python::bind_placement(m);
  pgroups::python::bind_store(m);
}
