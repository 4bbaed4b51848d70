// RankView and PartitionKey for Python (pgroups/layout/rank_view.hpp): the one per-rank view
// that pgroups.Plan.view, pgroups.torch, pgroups.megatron and pgroups.colossal answer from.
// Kinds travel as their names (a mesh token in any dimension order finds its kind).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/partition_key.hpp"
#include "pgroups/layout/rank_view.hpp"

namespace py = pybind11;

namespace pgroups::python {
namespace {

std::string pick_name(PartitionKey::Pick pick) {
  switch (pick) {
    case PartitionKey::Pick::first: return "first";
    case PartitionKey::Pick::first_and_last: return "first_and_last";
    default: return "all";
  }
}

// A kind is its name, or a pgroups.ParallelMode (whose value is the name).
std::size_t kind_index(const RankView& view, const py::handle& kind) {
  if (py::isinstance<py::str>(kind)) return view.kind(kind.cast<std::string>());
  if (py::hasattr(kind, "value") && py::isinstance<py::str>(kind.attr("value"))) {
    return view.kind(kind.attr("value").cast<std::string>());
  }
  throw py::type_error("kind must be a group kind's name or a pgroups.ParallelMode, not " +
                       std::string(py::str(py::type::handle_of(kind).attr("__name__"))) + " " +
                       std::string(py::repr(kind)));
}

// A query of one kind: the view's answer for the kind's index.
template <typename Result>
auto by_name(Result (RankView::*query)(std::size_t) const) {
  return [query](const RankView& view, const py::object& kind) { return (view.*query)(kind_index(view, kind)); };
}

}  // namespace

void bind_view(py::module_& m) {
  py::class_<PartitionKey>(m, "PartitionKey")
      .def_readonly("world_size", &PartitionKey::world_size)
      .def_readonly("runs", &PartitionKey::runs)
      .def_property_readonly("pick", [](const PartitionKey& k) { return pick_name(k.pick); })
      .def_property_readonly("full", &PartitionKey::full)
      .def_property_readonly("is_world", &PartitionKey::is_world)
      .def("__eq__",
           [](const PartitionKey& a, const py::object& b) {
             return py::isinstance<PartitionKey>(b) && a == b.cast<const PartitionKey&>();
           })
      .def("__hash__",
           [](const PartitionKey& k) {
             py::tuple runs(k.runs.size());
             for (std::size_t i = 0; i < k.runs.size(); ++i)
               runs[i] = py::make_tuple(k.runs[i].first, k.runs[i].second);
             return py::hash(py::make_tuple(k.world_size, runs, static_cast<int>(k.pick)));
           })
      .def("__repr__", [](const PartitionKey& k) { return "PartitionKey(" + k.text() + ")"; });

  py::class_<RankView>(m, "RankView")
      .def(py::init<const Layout&, std::int64_t>(), py::arg("layout"), py::arg("rank"), py::keep_alive<1, 2>())
      .def_property_readonly("rank", &RankView::rank)
      .def_property_readonly("kinds",
                             [](const RankView& v) {
                               std::vector<std::string> names;
                               for (const GroupKind& kind : v.layout().group_kinds()) names.push_back(kind.name);
                               return names;
                             })
      .def(
          "kind_name",
          [](const RankView& v, const py::object& kind) { return v.layout().group_kinds()[kind_index(v, kind)].name; },
          py::arg("kind"))
      .def("is_member", by_name(&RankView::is_member), py::arg("kind"))
      .def("local_rank", by_name(&RankView::local_rank), py::arg("kind"))
      .def("size", by_name(&RankView::size), py::arg("kind"))
      .def("members", by_name(&RankView::members), py::arg("kind"))
      .def("next_rank", by_name(&RankView::next_rank), py::arg("kind"))
      .def("previous_rank", by_name(&RankView::previous_rank), py::arg("kind"))
      .def("first_rank", by_name(&RankView::first_rank), py::arg("kind"))
      .def("last_rank", by_name(&RankView::last_rank), py::arg("kind"))
      .def("is_first", by_name(&RankView::is_first), py::arg("kind"))
      .def("is_last", by_name(&RankView::is_last), py::arg("kind"))
      .def("seed", by_name(&RankView::seed), py::arg("kind"))
      .def("group_index", by_name(&RankView::group_index), py::arg("kind"))
      .def("partition_key", by_name(&RankView::partition_key), py::arg("kind"))
      .def("flattened_dims", by_name(&RankView::flattened_dims), py::arg("kind"))
      .def_property_readonly("pipeline_stage", &RankView::pipeline_stage)
      .def_property_readonly("pipeline_stages", &RankView::pipeline_stages)
      .def("dimensions",
           [](const RankView& v) {
             std::vector<std::pair<std::string, std::int64_t>> out;
             for (const RankView::Dimension& dim : v.dimensions()) out.emplace_back(dim.name, dim.size);
             return out;
           })
      // Per kind, by name: ("world" | "singleton" | "shared" | "own", the owner's name).
      .def(
          "sharing",
          [](const RankView& v, bool share, const std::optional<std::vector<std::string>>& selection) {
            py::dict out;
            const auto kinds = v.layout().group_kinds();
            // A front door creating some kinds only (create_groups(modes=...)) decides over
            // those: the first selected kind of a partition owns it.
            std::vector<bool> selected(kinds.size(), !selection);
            if (selection) {
              for (const std::string& name : *selection) selected[v.layout().group_kind_index(name)] = true;
            }
            const std::vector<KindSharing> sharing = communicator_sharing(v.layout(), share, selected);
            for (std::size_t k = 0; k < kinds.size(); ++k) {
              out[py::str(kinds[k].name)] =
                  py::make_tuple(std::string(comm_source_name(sharing[k].source)), kinds[sharing[k].owner].name);
            }
            return out;
          },
          py::arg("share") = true, py::arg("kinds") = py::none())
      .def(
          "communicators",
          [](const RankView& v, bool share) {
            const CommunicatorBill bill = communicator_bill(v.layout(), v.rank(), share);
            py::dict out;
            out["kinds"] = bill.kinds;
            out["distinct"] = bill.distinct;
            out["singletons"] = bill.singletons;
            out["created"] = bill.created;
            return out;
          },
          py::arg("share") = true)
      .def("__repr__", [](const RankView& v) {
        return "RankView(rank " + std::to_string(v.rank()) + " of " + v.layout().summary() + ")";
      });
}

}  // namespace pgroups::python
