// Layout, Mesh and the rules and printers over them: pure, no MPI. The configuration's
// crossing is config_bindings.cpp.

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "pgroups/common/decimal_integer.hpp"
#include "pgroups/common/environment.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/config/config_json.hpp"
#include "pgroups/launch/store_keys.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/layout/agreement_record.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/mesh.hpp"
#include "pgroups/layout/mesh_config.hpp"
#include "pgroups/layout/virtual_pipeline.hpp"
#include "pgroups/report/bill_report.hpp"
#include "pgroups/report/locality_report.hpp"
#include "pgroups/report/plan_report.hpp"  // the printers the CLI uses: Plan.to_json and explain

namespace py = pybind11;

namespace pgroups::python {
namespace {

using DimList = std::vector<std::pair<std::string, std::int64_t>>;

DimMask mask_of(const Mesh& mesh, const std::vector<std::string>& names) {
  std::vector<std::string_view> views(names.begin(), names.end());
  return mesh.mask_of(views);
}

}  // namespace

// --- Rules bound for Python (docs/developing/architecture.md, "Where each rule lives"): each one is the C++ function
// the CLI and the library use, so that the package restates none of them. ---------------------
namespace {

py::bytes as_bytes(const std::string& text) { return py::bytes(text); }

void bind_store_keys(py::module_ m) {
  namespace keys = store_keys;
  m.def("attempt_prefix", &keys::attempt_prefix, py::arg("attempt"));
  m.def("generation_prefix", &keys::generation_prefix, py::arg("generation"));
  m.def("agreement_prefix", &keys::agreement_prefix, py::arg("generation"));
  m.def("direct_group_name", &keys::direct_group_name, py::arg("generation"), py::arg("kind"), py::arg("index"),
        py::arg("rank") = -1);
  m.def("local_group_name", &keys::local_group_name, py::arg("generation"), py::arg("kind"), py::arg("index"),
        py::arg("rank") = -1);
  m.def("recovery_prefix", &keys::recovery_prefix);
  m.def("recovery_heartbeat", &keys::recovery_heartbeat, py::arg("identity"));
  m.def("recovery_round_prefix", &keys::recovery_round_prefix, py::arg("generation"));
}

void bind_rules(py::module_& m) {
  m.attr("largest_timeout_seconds") = kLargestTimeoutSeconds;
  m.attr("default_timeout_seconds") = static_cast<double>(kDefaultTimeout.count()) / 1000.0;
  // The fixed waits, each declared once in pgroups/launch/timeout.hpp.
  m.attr("store_retry_interval_seconds") = static_cast<double>(kStoreRetryInterval.count()) / 1000.0;
  m.attr("heartbeat_store_timeout_seconds") = static_cast<double>(kHeartbeatStoreTimeout.count()) / 1000.0;
  m.attr("store_serving_when_unlimited_seconds") = static_cast<double>(kStoreServingWhenUnlimited.count()) / 1000.0;
  bind_store_keys(m.def_submodule("store_keys", "Every key pgroups writes in a store (pgroups/launch/store_keys.hpp)"));
  m.def(
      "timeout_seconds",
      [](double seconds, const std::string& source) -> std::optional<double> {
        const std::chrono::milliseconds timeout = timeout_from_seconds(seconds, source);
        if (!is_limited(timeout)) return std::nullopt;  // the one "0 means none" rule
        return static_cast<double>(timeout.count()) / 1000.0;
      },
      py::arg("seconds"), py::arg("source"));
  // The timeout in effect for an optional request: resolve_timeout's order (the request,
  // then PGROUPS_TIMEOUT, then the default), None for none.
  m.def(
      "resolved_timeout_seconds",
      [](std::optional<double> seconds, const std::string& source) -> std::optional<double> {
        const std::chrono::milliseconds timeout =
            resolve_timeout(seconds ? std::optional(timeout_from_seconds(*seconds, source)) : std::nullopt);
        if (!is_limited(timeout)) return std::nullopt;
        return static_cast<double>(timeout.count()) / 1000.0;
      },
      py::arg("seconds"), py::arg("source"));
  // A launcher variable read as nccl::choose_device reads it: None when unset or empty,
  // ConfigError with environment_count's message when malformed.
  m.def(
      "environment_count",
      [](const std::string& name) -> std::optional<std::int64_t> {
        EnvironmentCount count = environment_count(process_environment, name);
        if (count.malformed()) throw ConfigError(count.problem);
        return count.value;
      },
      py::arg("name"));
  m.def(
      "mesh_from_order",
      [](const std::string& order, const DimList& sizes) {
        std::vector<MeshDim> given;
        for (const auto& [name, size] : sizes) given.push_back(MeshDim{name, size});
        DimList out;
        for (const MeshDim& dim : mesh_dims_from_order(order, given)) out.emplace_back(dim.name, dim.size);
        return out;
      },
      py::arg("order"), py::arg("sizes"));
  // `pgroups plan --format json` and `pgroups explain --rank R` with their default options,
  // the communicator bill included.
  m.def(
      "plan_json",
      [](const Layout& l, int indent) {
        return report::plan_document_json(l, report::planned_locality(l), report::BillOptions{}).dump(indent);
      },
      py::arg("layout"), py::arg("indent") = -1);
  // `pgroups plan --gpus-per-node G`'s locality report and warnings, for G or the
  // configuration's gpus_per_node.
  const auto locality_of = [](const Layout& l, std::optional<std::int64_t> gpus_per_node) {
    const std::optional<std::int64_t> g = gpus_per_node ? gpus_per_node : l.config().gpus_per_node;
    if (!g) {
      throw ConfigError("gpus per node is not known: give gpus_per_node=G, or gpus_per_node in the configuration");
    }
    return report::planned_locality(l, *g);
  };
  m.def(
      "locality_report",
      [locality_of](const Layout& l, std::optional<std::int64_t> gpus_per_node, const std::string& format) {
        if (format != "text" && format != "json") {
          throw ConfigError("locality format '" + format + "' is unknown; use text or json");
        }
        const report::LocalityReport locality = locality_of(l, gpus_per_node);
        return format == "json" ? report::locality_json(locality).dump() : report::locality_text(locality);
      },
      py::arg("layout"), py::arg("gpus_per_node") = py::none(), py::arg("format") = "text");
  m.def(
      "locality_warnings",
      [locality_of](const Layout& l, std::optional<std::int64_t> gpus_per_node) {
        return report::locality_report_warnings(l, locality_of(l, gpus_per_node));
      },
      py::arg("layout"), py::arg("gpus_per_node") = py::none());
  m.def(
      "explain_text",
      [](const Layout& l, std::int64_t rank) {
        return report::explain_text(l, rank) + '\n' + report::bill_text(l, report::BillOptions{}, rank);
      },
      py::arg("layout"), py::arg("rank"));
  m.def(
      "encode_settings",
      [](const std::vector<std::pair<std::string, std::string>>& fields) { return as_bytes(encode_settings(fields)); },
      py::arg("fields"));
  m.def(
      "encode_error",
      [](const std::string& kind, const std::string& message) { return as_bytes(encode_error(kind, message)); },
      py::arg("kind"), py::arg("message"));
  m.def(
      "is_error_record", [](const py::bytes& record) { return is_error_record(std::string(record)); },
      py::arg("record"));
  m.def(
      "settings_digest", [](const py::bytes& record) { return settings_digest(std::string(record)); },
      py::arg("record"));
  m.def("record_text", [](const py::bytes& record) { return record_text(std::string(record)); }, py::arg("record"));
  // The settings of a plan as every front door agrees on them, field by field and as the
  // text a mismatch shows (the MPI context's own, pgroups/layout/parallel_config.hpp).
  m.def("setting_fields", [](const Layout& l) { return config_setting_fields(l.config()); }, py::arg("layout"));
  m.def("setting_text", [](const Layout& l) { return config_setting_text(l.config()); }, py::arg("layout"));
  // The one timeout text (pgroups/launch/timeout.hpp), for the torch agreement and watchdog.
  m.def(
      "timeout_message",
      [](double seconds, const std::string& what, const std::string& step, int rank, int size,
         const std::vector<int>& missing) {
        const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
        return timeout_message(timeout, what, step, rank, size, missing);
      },
      py::arg("seconds"), py::arg("what"), py::arg("step") = "", py::arg("rank") = -1, py::arg("size") = 0,
      py::arg("missing") = std::vector<int>{});
  // The CLI's check of an integer's range (pgroups/common/decimal_integer.hpp), for a
  // Python int beyond 64 bits: its decimal text, read as the CLI reads an option's.
  m.def(
      "require_int64",
      [](const std::string& digits, const std::string& name) {
        const IntegerReading reading = read_decimal_integer(digits);
        if (reading.status != IntegerStatus::ok) throw ConfigError(integer_problem(reading, digits, name));
        return reading.value;
      },
      py::arg("digits"), py::arg("name"));
  m.def(
      "judge_records",
      [](const std::vector<py::bytes>& records, const std::string& what) {
        std::vector<std::string> texts(records.begin(), records.end());
        judge_records(texts, what);
      },
      py::arg("records"), py::arg("what") = "configuration");
  // pgroups.torch's groups keep their interleaved-pipeline state in the C++ value that
  // ParallelContext holds, so that its rules are not restated in Python.
  py::class_<VirtualPipeline>(m, "VirtualPipeline")
      .def(py::init<>())
      .def("set_size", &VirtualPipeline::set_size, py::arg("size"))
      .def("set_rank", &VirtualPipeline::set_rank, py::arg("rank"))
      .def_property_readonly("size", &VirtualPipeline::size)
      .def_property_readonly("rank", &VirtualPipeline::rank)
      .def("runs_first_chunk", &VirtualPipeline::runs_first_chunk)
      .def("runs_last_chunk", &VirtualPipeline::runs_last_chunk);
}

}  // namespace
// --- end of the bound rules ------------------------------------------------------------

void bind_layout(py::module_& m) {
  bind_rules(m);

  py::class_<Layout>(m, "Layout")
      // The one way in: a configuration resolved by resolve_config / read_config_file.
      .def(py::init<ParallelConfig>(), py::arg("config"))
      .def_property_readonly("is_mesh", &Layout::is_mesh)
      .def_property_readonly("summary", &Layout::summary)
      .def_property_readonly("world_kind",
                             [](const Layout& l) -> std::optional<std::string> {
                               if (const auto kind = l.world_kind()) return l.group_kinds()[*kind].name;
                               return std::nullopt;
                             })
      .def("pipeline_stage", &Layout::pipeline_stage, py::arg("rank"))
      // config_json's object (docs/reference/spec.md §4), the one the plan JSON holds.
      .def("config_json", [](const Layout& l) { return config_json(l).dump(); })
      .def("group_kinds",
           [](const Layout& l) {
             py::list kinds;
             for (const GroupKind& kind : l.group_kinds()) {
               py::dict d;
               d["name"] = kind.name;
               d["dims"] = kind.dims;
               d["partial"] = kind.partial;
               d["note"] = kind.note;
               kinds.append(d);
             }
             return kinds;
           })
      .def("is_member", [](const Layout& l, std::int64_t rank,
                           const std::string& kind) { return l.is_member(rank, l.group_kind_index(kind)); })
      .def("kind_name",
           [](const Layout& l, const std::string& kind) { return l.group_kinds()[l.group_kind_index(kind)].name; })
      .def("config", [](const Layout& l) { return l.config(); })
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
      .def("has_kind", [](const Layout& l, const std::string& kind) { return l.find_group_kind(kind).has_value(); })
      .def("coordinates",
           [](const Layout& l, std::int64_t rank) {
             std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> out;
             for (const Coordinate& c : l.coordinates(rank)) out.emplace_back(c.name, c.value, c.size);
             return out;
           })
      .def("group_size",
           [](const Layout& l, const std::string& kind) { return l.group_size(l.group_kind_index(kind)); })
      .def("group_count",
           [](const Layout& l, const std::string& kind) { return l.group_count(l.group_kind_index(kind)); })
      .def("local_rank", [](const Layout& l, std::int64_t rank,
                            const std::string& kind) { return l.local_rank(rank, l.group_kind_index(kind)); })
      .def("group_index", [](const Layout& l, std::int64_t rank,
                             const std::string& kind) { return l.group_index(rank, l.group_kind_index(kind)); })
      .def("group_of", [](const Layout& l, std::int64_t rank,
                          const std::string& kind) { return l.group_of(rank, l.group_kind_index(kind)); })
      .def("groups", [](const Layout& l, const std::string& kind) { return l.groups(l.group_kind_index(kind)); })
      .def("seed", [](const Layout& l, std::int64_t rank, const std::string& kind) {
        return l.seed(rank, l.group_kind_index(kind));
      });

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
      .def("group_size",
           [](const Mesh& mesh, const std::vector<std::string>& dims) { return mesh.group_size(mask_of(mesh, dims)); })
      .def("group_count",
           [](const Mesh& mesh, const std::vector<std::string>& dims) { return mesh.group_count(mask_of(mesh, dims)); })
      .def("group_index",
           [](const Mesh& mesh, std::int64_t rank, const std::vector<std::string>& dims) {
             return mesh.group_index(rank, mask_of(mesh, dims));
           })
      .def("local_rank",
           [](const Mesh& mesh, std::int64_t rank, const std::vector<std::string>& dims) {
             return mesh.local_rank(rank, mask_of(mesh, dims));
           })
      .def("group_of", [](const Mesh& mesh, std::int64_t rank,
                          const std::vector<std::string>& dims) { return mesh.group_of(rank, mask_of(mesh, dims)); })
      .def("groups",
           [](const Mesh& mesh, const std::vector<std::string>& dims) { return mesh.groups(mask_of(mesh, dims)); });
}

}  // namespace pgroups::python
