// run_verify_on_bootstrap and run_bench_on_bootstrap in a build without gloo: --backend
// gloo is refused as the library refuses a backend it was built without.
#include "bench_on_bootstrap.hpp"
#include "pgroups/context/backend.hpp"
#include "verify_on_bootstrap.hpp"

namespace pgroups::cli {

int run_verify_on_bootstrap(const VerifyOptions& /*options*/) {
  require_backend_built(Backend::gloo);  // ConfigError: gloo was not built
  return 0;
}

int run_bench_on_bootstrap(const BenchOnBootstrap& /*job*/) {
  require_backend_built(Backend::gloo);  // ConfigError: gloo was not built
  return 0;
}

}  // namespace pgroups::cli
