// ParallelContext for Python, over an mpi4py communicator or over a bootstrap (launch's
// one door: torchrun's store, PMIx, MPI, processes started by hand), so that a job with no
// MPI in it has its groups too. Over MPI the world comes in as an mpi4py Comm and the
// groups go out as mpi4py Comm objects wrapping the context's own MPI_Comm handles: the
// same communicators, not duplicates. mpi4py frees only the handles it created itself, so
// dropping these objects never frees a communicator; the context does, in destroy(). Over
// a bootstrap the groups go out as Group objects (the kind's GroupHandle and members),
// which answer their rank, size and an all-gather through their own communicator.

#include "bindings.hpp"

#ifdef PGROUPS_PYTHON_WITH_CONTEXT

#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "pgroups/common/error.hpp"
#include "pgroups/context/bootstrap_agreement.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/launch/timeout.hpp"
#ifdef PGROUPS_PYTHON_WITH_MPI
#include <mpi.h>

#include "pgroups/mpi/agreement.hpp"
#include "pgroups/mpi/bootstrap.hpp"
#endif

namespace py = pybind11;

namespace pgroups::python {
namespace {

#ifdef PGROUPS_PYTHON_WITH_MPI
// mpi4py is reached through its Python API and MPI's own handle conversion
// (Comm.py2f / Intracomm.f2py over MPI_Comm_c2f / MPI_Comm_f2c), not through mpi4py's C
// API: that header would tie the module to the mpi4py release it was compiled against,
// and the one that runs may be another (a wheel built beside PyPI's mpi4py 4, run with
// Debian's 3.1). mpi4py.MPI is imported only here, on first use: importing it
// initialises MPI, which the pure layout must not require.
py::object mpi4py_intracomm_class() { return py::module_::import("mpi4py.MPI").attr("Intracomm"); }

MPI_Comm comm_of(const py::object& world) {
  if (!py::isinstance(world, mpi4py_intracomm_class())) {
    throw py::type_error("comm must be an mpi4py.MPI.Intracomm, not " +
                         std::string(py::str(py::type::of(world).attr("__qualname__"))));
  }
  return MPI_Comm_f2c(world.attr("py2f")().cast<MPI_Fint>());
}

py::object wrap_comm(MPI_Comm comm) { return mpi4py_intracomm_class().attr("f2py")(MPI_Comm_c2f(comm)); }
#endif

// A kind's group over a bootstrap, as Python holds it: the handle and the members.
struct Group {
  GroupHandle handle;
  std::vector<std::int64_t> members;
};

ContextOptions context_options(const std::optional<std::string>& strategy, std::optional<double> timeout_seconds,
                               std::optional<std::int64_t> device, std::int64_t devices_per_node,
                               bool share_communicators) {
  ContextOptions options;
  if (strategy) {
    options.strategy = parse_creation_strategy(*strategy);
    if (const std::string warning = strategy_deprecation(*strategy); !warning.empty()) {
      if (PyErr_WarnEx(PyExc_DeprecationWarning, warning.c_str(), 3) != 0) throw py::error_already_set();
    }
  }
  if (timeout_seconds) options.timeout = timeout_from_seconds(*timeout_seconds, "timeout");
  options.device = device;
  options.devices_per_node = devices_per_node;
  options.share_communicators = share_communicators;
  return options;
}

// The context and what it is built over, kept alive together: the mpi4py world it
// borrows, or the bootstrap it shares with the other contexts of the process.
class PyContext {
 public:
#ifdef PGROUPS_PYTHON_WITH_MPI
  PyContext(const ParallelConfig& config, const py::object& world, ContextOptions options) : world_(world) {
    const MPI_Comm comm = comm_of(world);
    // Ranks wait on each other here; other Python threads may run meanwhile.
    py::gil_scoped_release release;
    context_ = std::make_unique<ParallelContext>(config, comm, std::move(options));
  }
#endif
  PyContext(const ParallelConfig& config, std::shared_ptr<Bootstrap> bootstrap, ContextOptions options)
      : world_(py::none()), bootstrap_(std::move(bootstrap)) {
    py::gil_scoped_release release;
    context_ = std::make_unique<ParallelContext>(config, *bootstrap_, std::move(options));
  }

  // The communicators are freed collectively: other ranks may still be on their way.
  ~PyContext() {
    py::gil_scoped_release release;
    context_.reset();
  }
  PyContext(const PyContext&) = delete;
  PyContext& operator=(const PyContext&) = delete;

  ParallelContext& get() { return *context_; }
  py::object world() const { return world_; }
  std::shared_ptr<Bootstrap> bootstrap() const { return bootstrap_; }

  // An MPI communicator as mpi4py's; any other as a Group.
  template <typename Kind>
  py::object group(const GroupHandle& handle, const Kind& kind) {
#ifdef PGROUPS_PYTHON_WITH_MPI
    if (handle.backend() == Backend::mpi) return wrap_comm(handle.mpi());
#endif
    return py::cast(Group{handle, context_->ranks_in_group(kind)});
  }

  void destroy() {
    py::gil_scoped_release release;
    context_->destroy();
  }

 private:
  py::object world_;
  std::shared_ptr<Bootstrap> bootstrap_;  // declared before the context: outlives it
  std::unique_ptr<ParallelContext> context_;
};

// A kind as the queries take it: a handle from Context.kind, or its name.
using KindArg = std::variant<std::string, KindHandle>;

template <typename Query>
auto ask(const KindArg& kind, const Query& query) {
  return std::visit([&query](const auto& k) { return query(k); }, kind);
}

}  // namespace

void bind_context(py::module_& m) {
#ifdef PGROUPS_PYTHON_WITH_MPI
  m.attr("with_mpi") = true;
  mpi::register_bootstrap();  // the MPI bootstrap behind launch's door, as every front door built with MPI
  // The cross-rank agreement for Python callers: ParallelContext's rank that hit an error
  // before it could build the context meets the others' constructors with it.
  m.def(
      "agree",
      [](const py::object& world, const py::bytes& record, const std::string& what, double timeout_seconds) {
        const MPI_Comm comm = comm_of(world);
        // Resolved by the Python front door (0: none).
        const std::chrono::milliseconds timeout = timeout_from_seconds(timeout_seconds, "timeout");
        const std::string text(record);
        py::gil_scoped_release release;
        mpi::agree(mpi::Communicator::borrow(comm), text, what, mpi::Deadline(timeout));
      },
      py::arg("world"), py::arg("record"), py::arg("what"), py::arg("timeout"));
#else
  m.attr("with_mpi") = false;
#endif
  // A strategy's name checked by the constructor's own parser, before the agreement, so
  // that a wrong name on one rank is carried like a wrong type.
  m.def(
      "check_strategy",
      [](const std::string& name) { return std::string(strategy_name(parse_creation_strategy(name))); },
      py::arg("name"));
  // Launch's one door, and what a bootstrap answers. Every wait releases the GIL.
  py::class_<Bootstrap, std::shared_ptr<Bootstrap>>(m, "Bootstrap")
      .def_property_readonly("kind", [](const Bootstrap& b) { return std::string(bootstrap_name(b.kind())); })
      .def_property_readonly("rank", &Bootstrap::rank)
      .def_property_readonly("size", &Bootstrap::size)
      .def_property_readonly("local_rank", &Bootstrap::local_rank)
      .def_property_readonly("local_size", &Bootstrap::local_size)
      .def(
          "all_gather",
          [](Bootstrap& b, const py::bytes& mine, double timeout_seconds, const std::string& what) {
            const std::string bytes(mine);
            const std::chrono::milliseconds timeout = timeout_from_seconds(timeout_seconds, "timeout");
            std::vector<std::string> gathered;
            {
              py::gil_scoped_release release;
              gathered = b.all_gather(bytes, timeout, what);
            }
            py::list out;
            for (const std::string& each : gathered) out.append(py::bytes(each));
            return out;
          },
          py::arg("mine"), py::arg("timeout"), py::arg("what"))
      .def(
          "barrier",
          [](Bootstrap& b, double timeout_seconds, const std::string& what) {
            const std::chrono::milliseconds timeout = timeout_from_seconds(timeout_seconds, "timeout");
            py::gil_scoped_release release;
            b.barrier(timeout, what);
          },
          py::arg("timeout"), py::arg("what"));
  m.def(
      "start_bootstrap",
      [](const std::string& kind, double timeout_seconds) -> std::shared_ptr<Bootstrap> {
        const BootstrapKind requested = parse_bootstrap(kind);
        const std::chrono::milliseconds timeout = timeout_from_seconds(timeout_seconds, "timeout");
        py::gil_scoped_release release;
        return start_bootstrap(requested, timeout);
      },
      py::arg("kind"), py::arg("timeout"));
  m.def("bootstrap_names", &bootstrap_names);
  m.def(
      "agree_over_bootstrap",
      [](Bootstrap& bootstrap, const std::string& record, double timeout_seconds, const std::string& what) {
        agree_over_bootstrap(bootstrap, record, timeout_from_seconds(timeout_seconds, "timeout"), what);
      },
      py::arg("bootstrap"), py::arg("record"), py::arg("timeout_seconds"), py::arg("what"),
      "The configuration agreement over a bootstrap (pgroups/context/bootstrap_agreement.hpp): raises on every "
      "rank what the records say");
  py::class_<Group>(m, "Group")
      .def_property_readonly("name", [](const Group& g) { return g.handle.group(); })
      .def_property_readonly("backend", [](const Group& g) { return std::string(backend_name(g.handle.backend())); })
      .def_property_readonly("members", [](const Group& g) { return g.members; })
      .def_property_readonly("rank", [](const Group& g) { return g.handle.rank(); })
      .def_property_readonly("size", [](const Group& g) { return g.handle.size(); })
      .def(
          "all_gather",
          [](const Group& g, std::int64_t value) {
            py::gil_scoped_release release;
            return g.handle.all_gather(value);
          },
          py::arg("value"))
      .def("__repr__", [](const Group& g) {
        return "Group('" + g.handle.group() + "', backend='" + std::string(backend_name(g.handle.backend())) + "')";
      });
  py::class_<KindHandle>(m, "KindHandle")
      .def_property_readonly("name", &KindHandle::name)
      .def_property_readonly("index", &KindHandle::index)
      .def("__eq__", [](const KindHandle& a, const KindHandle& b) { return a == b; })
      .def("__hash__", [](const KindHandle& h) { return py::hash(py::str(h.name())); })
      .def("__repr__", [](const KindHandle& h) { return "KindHandle('" + h.name() + "')"; });
  py::class_<PyContext>(m, "Context")
  // The configuration as resolve_config gave it: merged once, in C++.
#ifdef PGROUPS_PYTHON_WITH_MPI
      .def(py::init([](const ParallelConfig& config, const py::object& world,
                       const std::optional<std::string>& strategy, std::optional<double> timeout,
                       std::optional<std::int64_t> device, std::int64_t devices_per_node, bool share) {
             return std::make_unique<PyContext>(config, world,
                                                context_options(strategy, timeout, device, devices_per_node, share));
           }),
           py::arg("config"), py::arg("world"), py::arg("strategy"), py::arg("timeout"), py::arg("device"),
           py::arg("devices_per_node"), py::arg("share_communicators") = true)
#endif
      .def_static(
          "on_bootstrap",
          [](const ParallelConfig& config, const std::shared_ptr<Bootstrap>& bootstrap, const std::string& backend,
             std::optional<double> timeout, std::optional<std::int64_t> device, std::int64_t devices_per_node,
             bool share) {
            ContextOptions options = context_options(std::nullopt, timeout, device, devices_per_node, share);
            options.backend = parse_backend(backend);
            return std::make_unique<PyContext>(config, bootstrap, std::move(options));
          },
          py::arg("config"), py::arg("bootstrap"), py::arg("backend"), py::arg("timeout"), py::arg("device"),
          py::arg("devices_per_node"), py::arg("share_communicators") = true)
      .def_property_readonly("bootstrap", &PyContext::bootstrap)
      .def("backend", [](PyContext& c) { return std::string(backend_name(c.get().backend())); })
      .def("share_communicators", [](PyContext& c) { return c.get().options().share_communicators; })
      .def_property_readonly("world", &PyContext::world)
      // A copy, so that a Plan over it neither keeps the context alive nor revalidates.
      .def("layout", [](PyContext& c) { return Layout(c.get().layout()); })
      .def("strategy", [](PyContext& c) { return std::string(strategy_name(c.get().options().strategy)); })
      .def("timeout_seconds",
           [](PyContext& c) {
             return c.get().options().timeout ? static_cast<double>(c.get().options().timeout->count()) / 1000.0 : 0.0;
           })
      .def("is_initialized", [](PyContext& c, const std::string& kind) { return c.get().is_initialized(kind); })
      .def("kind", [](PyContext& c, const std::string& kind) { return c.get().kind(kind); })
      .def("is_member",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.get().is_member(k); });
           })
      .def("kind_names", [](PyContext& c) { return c.get().kind_names(); })
      .def("groups", [](PyContext& c) { return c.get().kind_names(); })
      .def("modes",
           [](PyContext& c) {
             std::vector<std::string> names;
             for (ParallelMode mode : c.get().modes()) names.emplace_back(mode_name(mode));
             return names;
           })
      .def("global_rank", [](PyContext& c) { return c.get().global_rank(); })
      .def("local_rank",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.get().local_rank(k); });
           })
      .def("world_size",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.get().world_size(k); });
           })
      .def("get_group",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.group(c.get().get_group(k), k); });
           })
      .def("get_cpu_group",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.group(c.get().get_cpu_group(k), k); });
           })
      .def("ranks_in_group",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.get().ranks_in_group(k); });
           })
      .def("next_global_rank",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.get().next_global_rank(k); });
           })
      .def("prev_global_rank",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.get().prev_global_rank(k); });
           })
      .def("is_first_rank",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.get().is_first_rank(k); });
           })
      .def("is_last_rank",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.get().is_last_rank(k); });
           })
      .def("seed",
           [](PyContext& c, const KindArg& kind) { return ask(kind, [&c](const auto& k) { return c.get().seed(k); }); })
      .def("creation_seconds",
           [](PyContext& c, const KindArg& kind) {
             return ask(kind, [&c](const auto& k) { return c.get().creation_seconds(k); });
           })
      .def("is_pipeline_first_stage",
           [](PyContext& c, bool ignore_virtual) { return c.get().is_pipeline_first_stage(ignore_virtual); })
      .def("is_pipeline_last_stage",
           [](PyContext& c, bool ignore_virtual) { return c.get().is_pipeline_last_stage(ignore_virtual); })
      .def("set_virtual_pipeline_parallel_size",
           [](PyContext& c, std::optional<std::int64_t> size) { c.get().set_virtual_pipeline_parallel_size(size); })
      .def("set_virtual_pipeline_parallel_rank",
           [](PyContext& c, std::int64_t rank) { c.get().set_virtual_pipeline_parallel_rank(rank); })
      .def("virtual_pipeline_parallel_size", [](PyContext& c) { return c.get().virtual_pipeline_parallel_size(); })
      .def("virtual_pipeline_parallel_rank", [](PyContext& c) { return c.get().virtual_pipeline_parallel_rank(); })
      .def("processes_on_node", [](PyContext& c) { return c.get().processes_on_node(); })
      .def("local_rank_on_node", [](PyContext& c) { return c.get().local_rank_on_node(); })
      .def("device", [](PyContext& c) { return c.get().device(); })
      .def("destroy", &PyContext::destroy);
}

}  // namespace pgroups::python

#else  // !PGROUPS_PYTHON_WITH_CONTEXT

namespace pgroups::python {
void bind_context(pybind11::module_& m) { m.attr("with_mpi") = false; }
}  // namespace pgroups::python

#endif
