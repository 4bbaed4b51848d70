// A configuration crosses into C++ once (docs/developing/architecture.md, "The front doors"): Python's arguments become
// a ConfigOverrides, merged over a file (or the defaults) by merge_config, the CLI's own rule, and the result is a
// ParallelConfig or the Layout itself. gpus_per_node and the rest dimension travel with it, so that no field is lost on
// the way back to Python.

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/config/config_merge.hpp"
#include "pgroups/config/config_reader.hpp"
#include "pgroups/config/rank_map_file.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/mesh_config.hpp"

namespace py = pybind11;

namespace pgroups::python {
namespace {

using DimList = std::vector<std::pair<std::string, std::int64_t>>;

std::vector<MeshDim> mesh_dims(const DimList& pairs) {
  std::vector<MeshDim> dims;
  dims.reserve(pairs.size());
  for (const auto& [name, size] : pairs) dims.push_back(MeshDim{name, size});
  return dims;
}

std::optional<DimList> dim_list(const ParallelConfig& config) {
  if (!config.mesh) return std::nullopt;
  DimList out;
  for (const MeshDim& dim : config.mesh->dims) out.emplace_back(dim.name, dim.size);
  return out;
}

// Paths arrive as os.fsencode's bytes (pgroups._plan._path): a name in any encoding, and
// an empty one or one with a NUL whole, for read_config_file to refuse as IoError (a
// filesystem::path caster would cut at a NUL, or refuse with a signature dump).
ParallelConfig resolve_config(const std::optional<std::string>& path, const ConfigOverrides& overrides,
                              const std::optional<std::string>& world_size_hint) {
  ParallelConfig merged =
      merge_config(path ? read_config_file(std::filesystem::path(*path)) : ParallelConfig{}, overrides, "mesh=");
  if (world_size_hint) require_world_size(merged, *world_size_hint);
  return merged;
}

ConfigFormat format_of(const std::string& format) {
  if (format == "toml") return ConfigFormat::toml;
  if (format == "json") return ConfigFormat::json;
  if (format == "python" || format == "py") return ConfigFormat::python;
  throw ParseError("config format '" + format + "' is unknown; use toml, json or python");
}

}  // namespace

void bind_config(py::module_& m) {
  py::class_<ParallelConfig>(m, "ParallelConfig")
      .def_readonly("world_size", &ParallelConfig::world_size)
      .def_readonly("gpus_per_node", &ParallelConfig::gpus_per_node)
      .def_readonly("pipeline", &ParallelConfig::pipeline)
      .def_readonly("tensor", &ParallelConfig::tensor_size)
      .def_property_readonly("mode",
                             [](const ParallelConfig& c) -> std::optional<std::string> {
                               if (c.tensor_mode == TensorMode::none) return std::nullopt;
                               return std::string(tensor_mode_name(c.tensor_mode));
                             })
      .def_readonly("depth", &ParallelConfig::depth)
      .def_readonly("legacy_sequence_dp", &ParallelConfig::legacy_sequence_dp)
      .def_readonly("seed", &ParallelConfig::seed)
      .def_readonly("rank_map", &ParallelConfig::rank_map)
      .def_property_readonly("mesh", &dim_list)
      .def_property_readonly(
          "groups", [](const ParallelConfig& c) { return c.mesh ? c.mesh->groups : std::vector<std::string>{}; })
      .def("__eq__", [](const ParallelConfig& a, const ParallelConfig& b) { return a == b; })
      .def("__hash__", [](const ParallelConfig& c) { return py::hash(py::str(config_setting_text(c))); })
      .def("__repr__", [](const ParallelConfig& c) { return "ParallelConfig(" + describe(c) + ")"; });

  // Every field absent (None) leaves the file's value; the types were checked by
  // pgroups/_checks.py, the values are C++'s to judge.
  py::class_<ConfigOverrides>(m, "ConfigOverrides")
      .def(py::init([](std::optional<std::int64_t> world_size, std::optional<std::int64_t> pipeline,
                       std::optional<std::int64_t> tensor, const std::optional<std::string>& mode,
                       std::optional<std::int64_t> depth, std::optional<bool> legacy_sequence_dp,
                       std::optional<std::int64_t> seed, std::optional<std::int64_t> gpus_per_node,
                       const std::optional<DimList>& mesh, std::optional<std::vector<std::string>> groups,
                       std::optional<std::string> rest_dimension, std::optional<std::vector<std::int64_t>> rank_map) {
             ConfigOverrides o;
             o.world_size = world_size;
             o.pipeline = pipeline;
             o.tensor = tensor;
             if (mode) o.mode = parse_tensor_mode(*mode);
             o.depth = depth;
             o.legacy_sequence_dp = legacy_sequence_dp;
             o.seed = seed;
             o.gpus_per_node = gpus_per_node;
             if (mesh) o.mesh = mesh_dims(*mesh);
             o.groups = std::move(groups);
             o.rest_dimension = std::move(rest_dimension);
             o.rank_map = std::move(rank_map);
             return o;
           }),
           py::kw_only(), py::arg("world_size") = py::none(), py::arg("pipeline") = py::none(),
           py::arg("tensor") = py::none(), py::arg("mode") = py::none(), py::arg("depth") = py::none(),
           py::arg("legacy_sequence_dp") = py::none(), py::arg("seed") = py::none(),
           py::arg("gpus_per_node") = py::none(), py::arg("mesh") = py::none(), py::arg("groups") = py::none(),
           py::arg("rest_dimension") = py::none(), py::arg("rank_map") = py::none());
  m.def(
      "read_rank_map_file", [](const std::filesystem::path& path) { return read_rank_map_file(path); },
      py::arg("path"));

  m.def("read_config_file", [](const std::filesystem::path& path) { return read_config_file(path); }, py::arg("path"));
  m.def(
      "parse_config",
      [](const std::string& text, const std::string& format, const std::string& source) {
        return parse_config(text, format_of(format), source);
      },
      py::arg("text"), py::arg("format"), py::arg("source") = "<config>");
  // The one crossing: a file (or none) and the overrides, merged once; with
  // world_size_hint, require_world_size names the caller's spelling of a missing size.
  m.def("resolve_config", &resolve_config, py::arg("path"), py::arg("overrides"),
        py::arg("world_size_hint") = py::none());
  m.def(
      "resolve_layout",
      [](const std::optional<std::string>& path, const ConfigOverrides& overrides,
         const std::optional<std::string>& world_size_hint) {
        return Layout(resolve_config(path, overrides, world_size_hint));
      },
      py::arg("path"), py::arg("overrides"), py::arg("world_size_hint") = py::none());
}

}  // namespace pgroups::python
