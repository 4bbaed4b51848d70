// connect_gloo_kinds in a build without the gloo backend (CMake compiles this file when
// pgroups::gloo does not exist): it fails as asking for the backend does.
#include "gloo_kinds.hpp"
#include "pgroups/context/backend.hpp"

namespace pgroups::detail {

void connect_gloo_kinds(std::vector<KindGroup>& /*created*/, std::shared_ptr<::gloo::Context>& /*world*/,
                        const Layout& /*layout*/, std::int64_t /*global_rank*/, Bootstrap& /*bootstrap*/,
                        std::chrono::milliseconds /*timeout*/) {
  require_backend_built(Backend::gloo);  // ConfigError: gloo was not built
}

}  // namespace pgroups::detail
