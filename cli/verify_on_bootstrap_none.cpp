// run_verify_on_bootstrap in a build without gloo: --backend gloo is refused as the
// library refuses a backend it was built without.
#include "pgroups/context/backend.hpp"
#include "verify_on_bootstrap.hpp"

namespace pgroups::cli {

int run_verify_on_bootstrap(const VerifyOptions& /*options*/) {
  require_backend_built(Backend::gloo);  // ConfigError: gloo was not built
  return 0;
}

}  // namespace pgroups::cli
