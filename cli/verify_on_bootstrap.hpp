#pragma once
// `pgroups verify` on a bootstrap (verify_on_bootstrap.cpp): the gloo backend, with MPI
// only under the MPI bootstrap.

#include "verify_checks.hpp"

namespace pgroups::cli {

/// Runs verify for `options` (backend gloo) on the bootstrap options.bootstrap resolves
/// to, and returns the process's exit status. The bootstrap's own start-up errors
/// (ConfigError, TimeoutError) are thrown on this rank before any collective.
[[nodiscard]] int run_verify_on_bootstrap(const VerifyOptions& options);

}  // namespace pgroups::cli
