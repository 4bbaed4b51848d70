// Recovery (pgroups/layout/recovery.hpp) and its report: Plan.after_loss's one crossing.

#include <pybind11/stl.h>

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/layout/recovery.hpp"
#include "pgroups/report/plan_report.hpp"
#include "pgroups/report/recovery_report.hpp"

namespace py = pybind11;

namespace pgroups::python {

void bind_recovery(py::module_& m) {
  m.def(
      "resized",
      [](const Layout& layout, std::int64_t world, const std::string& shrink) {
        return resized(layout, world, shrink).layout;
      },
      py::arg("layout"), py::arg("world"), py::arg("shrink") = "",
      "The layout of the same shape for a world of `world` ranks (pgroups/layout/recovery.hpp, resized)");
  py::class_<Recovery>(m, "Recovery")
      .def(py::init([](const Layout& layout, std::vector<std::int64_t> lost, std::vector<std::int64_t> joining,
                       std::string shrink) {
             return Recovery(layout, RecoveryRequest{std::move(lost), std::move(joining), std::move(shrink)});
           }),
           py::arg("layout"), py::arg("lost"), py::arg("joining"), py::arg("shrink"))
      .def_static(
          "from_alive",
          [](const Layout& layout, const std::vector<std::int64_t>& alive, std::string shrink) {
            return Recovery(layout, recovery_request_from_alive(layout.world_size(), alive, std::move(shrink)));
          },
          py::arg("layout"), py::arg("alive"), py::arg("shrink"))
      .def_property_readonly("layout", [](const Recovery& r) { return r.layout(); })
      .def_property_readonly("shrink_dim", &Recovery::shrink_dim)
      .def_property_readonly("replica_size", &Recovery::replica_size)
      .def_property_readonly("dropped_replicas",
                             [](const Recovery& r) {
                               return std::vector<std::int64_t>(r.dropped_replicas().begin(),
                                                                r.dropped_replicas().end());
                             })
      .def_property_readonly("added_replicas", &Recovery::added_replicas)
      .def_property_readonly(
          "lost", [](const Recovery& r) { return std::vector<std::int64_t>(r.lost().begin(), r.lost().end()); })
      .def_property_readonly(
          "joining",
          [](const Recovery& r) { return std::vector<std::int64_t>(r.joining().begin(), r.joining().end()); })
      .def_property_readonly("spare_count", &Recovery::spare_count)
      .def("spares",
           [](const Recovery& r) {
             if (r.spare_count() > report::kMaxJsonWorldSize) {
               throw ConfigError(fmt::format("{} spares are too many to list (at most {}); ask fate(rank) for one",
                                             r.spare_count(), report::kMaxJsonWorldSize));
             }
             return r.spares();
           })
      .def("rank_map",
           [](const Recovery& r) {
             if (r.layout().world_size() > report::kMaxJsonWorldSize) {
               throw ConfigError(
                   fmt::format("a rank map of {} ranks is too large to list (at most {}); ask old_rank(r) for one rank",
                               r.layout().world_size(), report::kMaxJsonWorldSize));
             }
             return r.rank_map();
           })
      .def("old_rank", &Recovery::old_rank, py::arg("new_rank"))
      .def("new_rank", &Recovery::new_rank, py::arg("old_rank"))
      .def(
          "fate", [](const Recovery& r, std::int64_t rank) { return std::string(rank_fate_name(r.fate(rank))); },
          py::arg("old_rank"))
      .def("text", [](const Recovery& r) { return report::recovery_text(r, report::BillOptions{}); })
      .def("rank_text", &report::recovery_rank_text, py::arg("old_rank"))
      .def("bill_json", [](const Recovery& r) { return report::recovery_bill_json(r, report::BillOptions{}).dump(); })
      // `pgroups plan --lost ... --format json`: the new plan's document and the recovery's keys.
      .def(
          "plan_json",
          [](const Recovery& r, int indent) {
            nlohmann::json json = report::plan_document_json(r.layout(), std::nullopt, report::BillOptions{});
            json.update(report::recovery_json(r, report::BillOptions{}));
            return json.dump(indent);
          },
          py::arg("indent") = -1);
  // Plan.what_if: `pgroups plan --what-if node --format json`'s "what_if" object, as text.
  m.def(
      "what_if_node_json",
      [](const Layout& layout, std::int64_t gpus_per_node, std::string shrink) {
        const NodeLossWhatIf what_if = what_if_node_loss(layout, gpus_per_node, std::move(shrink));
        return report::what_if_json(layout, what_if, report::BillOptions{}).at("what_if").dump();
      },
      py::arg("layout"), py::arg("gpus_per_node"), py::arg("shrink"));
}

}  // namespace pgroups::python
