#pragma once
/// \file
/// The PMIx bootstrap: a process started by a launcher with a PMIx server (Slurm's
/// `srun --mpi=pmix`, Open MPI's `mpirun`, PRRTE's `prterun`) learns its rank, the world,
/// its node from PMIx, all-gathers by put, commit and a fence that collects the data, and
/// needs no MPI. No PMIx header here: a consumer needs none.

#include <memory>

#include "pgroups/common/environment.hpp"
#include "pgroups/launch/bootstrap.hpp"

namespace pgroups {

/// Whether a PMIx server launched this process: the launcher set PMIX_NAMESPACE and
/// PMIX_RANK (read through `lookup`).
[[nodiscard]] bool pmix_server_present(const EnvironmentLookup& lookup);

/// This process's PMIx bootstrap. PMIx is initialised for it and finalised when it is
/// destroyed. ConfigError when pgroups was built without PMIx, or when no PMIx server
/// launched this process (pmix_server_present: "--bootstrap pmix needs a launcher with
/// a PMIx server ..."); BackendError naming PMIx's error when PMIx_Init or a query fails.
/// A wait that times out (PMIx's fence, with PMIX_TIMEOUT in whole seconds, rounded up)
/// is a TimeoutError; PMIx does not say which ranks were missing.
[[nodiscard]] std::unique_ptr<Bootstrap> make_pmix_bootstrap(const EnvironmentLookup& lookup = process_environment);

}  // namespace pgroups
