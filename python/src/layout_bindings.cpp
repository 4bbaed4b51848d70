// Layout, Mesh and the configuration readers: pure, no MPI.

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "pgroups/config_reader.hpp"
#include "pgroups/error.hpp"
#include "pgroups/layout.hpp"
#include "pgroups/mesh.hpp"

namespace py = pybind11;

namespace pgroups::python {
namespace {

ParallelConfig make_config(std::int64_t world_size, std::int64_t pipeline, std::int64_t tensor,
                           const std::optional<std::string>& mode, std::optional<std::int64_t> depth,
                           bool legacy_sequence_dp, std::int64_t seed) {
  ParallelConfig config;
  config.world_size = world_size;
  config.pipeline = pipeline;
  config.tensor_size = tensor;
  config.tensor_mode = mode ? parse_tensor_mode(*mode) : TensorMode::none;
  config.depth = depth;
  config.legacy_sequence_dp = legacy_sequence_dp;
  config.seed = seed;
  return config;
}

py::dict config_dict(const ParallelConfig& c) {
  py::dict d;
  d["world_size"] = c.world_size;
  d["pipeline"] = c.pipeline;
  d["tensor"] = c.tensor_size;
  d["mode"] = c.tensor_mode == TensorMode::none ? py::object(py::none())
                                                : py::object(py::str(std::string(tensor_mode_name(c.tensor_mode))));
  d["depth"] = c.depth ? py::object(py::int_(*c.depth)) : py::object(py::none());
  d["legacy_sequence_dp"] = c.legacy_sequence_dp;
  d["seed"] = c.seed;
  return d;
}

DimMask mask_of(const Mesh& mesh, const std::vector<std::string>& names) {
  std::vector<std::string_view> views(names.begin(), names.end());
  return mesh.mask_of(views);
}

}  // namespace

void bind_layout(py::module_& m) {
  m.def("read_config_file", [](const std::filesystem::path& path) { return config_dict(read_config_file(path)); },
        py::arg("path"));
  m.def("parse_config",
        [](const std::string& text, const std::string& format, const std::string& source) {
          ConfigFormat f = ConfigFormat::toml;
          if (format == "json") f = ConfigFormat::json;
          else if (format == "python" || format == "py") f = ConfigFormat::python;
          else if (format != "toml") throw ParseError("config format '" + format + "' is unknown; use toml, json or python");
          return config_dict(parse_config(text, f, source));
        },
        py::arg("text"), py::arg("format"), py::arg("source") = "<config>");

  py::class_<Layout>(m, "Layout")
      .def(py::init([](std::int64_t world_size, std::int64_t pipeline, std::int64_t tensor,
                       const std::optional<std::string>& mode, std::optional<std::int64_t> depth, bool legacy,
                       std::int64_t seed) {
             return Layout(make_config(world_size, pipeline, tensor, mode, depth, legacy, seed));
           }),
           py::arg("world_size"), py::arg("pipeline"), py::arg("tensor"), py::arg("mode"), py::arg("depth"),
           py::arg("legacy_sequence_dp"), py::arg("seed"))
      .def("config", [](const Layout& l) { return config_dict(l.config()); })
      .def("describe", [](const Layout& l) { return describe(l.config()); })
      .def_property_readonly("world_size", &Layout::world_size)
      .def_property_readonly("pipeline_size", &Layout::pipeline_size)
      .def_property_readonly("tensor_size", &Layout::tensor_size)
      .def_property_readonly("data_parallel_size", &Layout::data_parallel_size)
      .def_property_readonly("tensor_grid_dim", &Layout::tensor_grid_dim)
      .def("modes",
           [](const Layout& l) {
             std::vector<std::string> names;
             for (ParallelMode mode : l.modes()) names.emplace_back(mode_name(mode));
             return names;
           })
      .def("has_mode", [](const Layout& l, const std::string& mode) { return l.has_mode(mode_of(mode)); })
      .def("coordinates",
           [](const Layout& l, std::int64_t rank) {
             std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> out;
             for (const Coordinate& c : l.coordinates(rank)) out.emplace_back(c.name, c.value, c.size);
             return out;
           })
      .def("group_size", [](const Layout& l, const std::string& mode) { return l.group_size(mode_of(mode)); })
      .def("group_count", [](const Layout& l, const std::string& mode) { return l.group_count(mode_of(mode)); })
      .def("local_rank",
           [](const Layout& l, std::int64_t rank, const std::string& mode) { return l.local_rank(rank, mode_of(mode)); })
      .def("group_index",
           [](const Layout& l, std::int64_t rank, const std::string& mode) { return l.group_index(rank, mode_of(mode)); })
      .def("group_of",
           [](const Layout& l, std::int64_t rank, const std::string& mode) { return l.group_of(rank, mode_of(mode)); })
      .def("groups", [](const Layout& l, const std::string& mode) { return l.groups(mode_of(mode)); })
      .def("seed", [](const Layout& l, std::int64_t rank, const std::string& mode) { return l.seed(rank, mode_of(mode)); });

  py::class_<Mesh>(m, "Mesh")
      .def(py::init([](const std::vector<std::pair<std::string, std::int64_t>>& dims) {
             std::vector<MeshDim> d;
             for (const auto& [name, size] : dims) d.push_back(MeshDim{name, size});
             return Mesh(std::move(d));
           }),
           py::arg("dims"))
      .def_property_readonly("size", &Mesh::size)
      .def("dims",
           [](const Mesh& mesh) {
             std::vector<std::pair<std::string, std::int64_t>> out;
             for (const MeshDim& d : mesh.dims()) out.emplace_back(d.name, d.size);
             return out;
           })
      .def("coordinates", &Mesh::coordinates, py::arg("rank"))
      .def("rank_of", [](const Mesh& mesh, const std::vector<std::int64_t>& coords) { return mesh.rank_of(coords); })
      .def("group_size", [](const Mesh& mesh, const std::vector<std::string>& dims) {
        return mesh.group_size(mask_of(mesh, dims));
      })
      .def("group_count", [](const Mesh& mesh, const std::vector<std::string>& dims) {
        return mesh.group_count(mask_of(mesh, dims));
      })
      .def("group_index", [](const Mesh& mesh, std::int64_t rank, const std::vector<std::string>& dims) {
        return mesh.group_index(rank, mask_of(mesh, dims));
      })
      .def("local_rank", [](const Mesh& mesh, std::int64_t rank, const std::vector<std::string>& dims) {
        return mesh.local_rank(rank, mask_of(mesh, dims));
      })
      .def("group_of", [](const Mesh& mesh, std::int64_t rank, const std::vector<std::string>& dims) {
        return mesh.group_of(rank, mask_of(mesh, dims));
      })
      .def("groups", [](const Mesh& mesh, const std::vector<std::string>& dims) {
        return mesh.groups(mask_of(mesh, dims));
      });
}

}  // namespace pgroups::python
