// A store of Python's (torch.distributed's TCPStore, PrefixStore, ...) seen as pgroups'
// Store (pgroups/launch/store.hpp), so that the protocols over a store run once, in C++,
// for the Python front as for the C++ bootstraps: agree_on_attempt, pgroups.torch's
// attempt_prefix.

#include <pybind11/chrono.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "pgroups/launch/attempt.hpp"
#include "pgroups/launch/store.hpp"
#include "pgroups/launch/timeout.hpp"

namespace py = pybind11;

namespace pgroups::python {
namespace {

// torch.distributed.Store's methods: set(key, value), get(key) -> bytes, add(key, n) -> int,
// check(keys) -> bool (torch >= 2), wait(keys, timedelta), which raises when the time
// passes. Called with the GIL held (from Python).
class PythonStore final : public Store {
 public:
  explicit PythonStore(py::object store) : store_(std::move(store)) {}

  void set(std::string_view key, std::string_view value) override {
    store_.attr("set")(std::string(key), py::bytes(std::string(value)));
  }
  [[nodiscard]] std::string get(std::string_view key) override {
    return store_.attr("get")(std::string(key)).cast<std::string>();
  }
  std::int64_t add(std::string_view key, std::int64_t delta) override {
    return store_.attr("add")(std::string(key), delta).cast<std::int64_t>();
  }
  // torch 1.x's stores have no check: a wait of a millisecond asks the same.
  [[nodiscard]] bool check(const std::vector<std::string>& keys) override {
    if (py::hasattr(store_, "check")) return store_.attr("check")(keys).cast<bool>();
    try {
      store_.attr("wait")(keys, std::chrono::milliseconds(1));
      return true;
    } catch (py::error_already_set& error) {
      if (!error.matches(PyExc_RuntimeError)) throw;
      return false;
    }
  }
  // torch raises on a timeout (DistStoreError, a RuntimeError; RuntimeError in torch 1.x):
  // a RuntimeError that comes at the deadline is the timeout, one before it the store's failure.
  [[nodiscard]] bool wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    const auto deadline = deadline_after(std::chrono::steady_clock::now(), timeout);
    try {
      store_.attr("wait")(keys, wait_limit(timeout));
      return true;
    } catch (py::error_already_set& error) {
      if (!error.matches(PyExc_RuntimeError) || !is_limited(timeout) ||
          std::chrono::steady_clock::now() < deadline - std::chrono::milliseconds(50)) {
        throw;
      }
      return false;
    }
  }
  [[nodiscard]] std::string address() const override { return py::str(store_).cast<std::string>(); }

 private:
  py::object store_;
};

}  // namespace

void bind_store(py::module_& m) {
  m.def(
      "agree_on_attempt",
      [](py::object store, int rank, int world_size, double timeout_seconds) {
        PythonStore wrapped(std::move(store));
        return agree_on_attempt(wrapped, rank, world_size, timeout_from_seconds(timeout_seconds, "timeout"));
      },
      py::arg("store"), py::arg("rank"), py::arg("world_size"), py::arg("timeout_seconds"),
      "The launcher attempt this rank belongs to, agreed with every rank of it through `store` (a "
      "torch.distributed.Store); pgroups/launch/attempt.hpp. timeout_seconds 0: none");
}

}  // namespace pgroups::python
