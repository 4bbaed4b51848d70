// The communicator economy (docs/using/context.md, "Communicator economy") for Python: Plan.communicators() and the
// sharing that pgroups.torch follows, bound from the one C++ rule (pgroups/layout/communicator_sharing.hpp).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "bindings.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/cost/nccl_memory.hpp"
#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/layout/layout.hpp"

namespace py = pybind11;

namespace pgroups::python {

void bind_bill(py::module_& m) {
  m.def(
      "communicator_bill",
      [](const Layout& layout, std::optional<std::int64_t> rank, bool share, const std::string& backend) {
        if (backend != "mpi" && backend != "nccl") {
          throw ConfigError("backend '" + backend + "' is unknown: it is mpi or nccl");
        }
        // Rank 0 holds the largest per-rank figures (largest_communicator_bill).
        const std::int64_t r = rank.value_or(0);
        const CommunicatorBill bill = communicator_bill(layout, r, share);
        py::dict out;
        out["kinds"] = bill.kinds;
        out["distinct"] = bill.distinct;
        out["singletons"] = bill.singletons;
        out["created"] = bill.created;
        if (backend == "nccl") {
          out["nccl_created"] = bill.created;
          out["estimated_nccl_mib"] = estimate_nccl_memory(layout, r, share).mib;
        }
        return out;
      },
      py::arg("layout"), py::arg("rank") = py::none(), py::arg("share") = true, py::arg("backend") = "mpi");
  // The line `pgroups explain` and `plan` print after "communicators: ".
  m.def(
      "communicator_bill_text",
      [](const Layout& layout, std::int64_t rank, bool share) {
        return bill_text(communicator_bill(layout, rank, share));
      },
      py::arg("layout"), py::arg("rank"), py::arg("share") = true);
  m.def(
      "communicator_sharing",
      [](const Layout& layout, bool share) {
        py::list out;
        for (const KindSharing& kind : communicator_sharing(layout, share)) {
          out.append(py::make_tuple(std::string(comm_source_name(kind.source)), kind.owner));
        }
        return out;
      },
      py::arg("layout"), py::arg("share") = true);
}

}  // namespace pgroups::python
