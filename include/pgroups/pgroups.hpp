#pragma once
/// \file
/// Umbrella header: the pure parts of pgroups (the layout layer, its cost models, the
/// launch's environment, and the reading of configuration files), with no MPI or NCCL dependency. The communicators
/// live in pgroups/context.hpp; each layer has its own umbrella (pgroups/layout.hpp, pgroups/config.hpp,
/// pgroups/report.hpp, pgroups/mpi.hpp, pgroups/nccl.hpp).

#include "pgroups/common.hpp"                // IWYU pragma: export
#include "pgroups/config/config_reader.hpp"  // IWYU pragma: export
#include "pgroups/cost.hpp"                  // IWYU pragma: export
#include "pgroups/launch.hpp"                // IWYU pragma: export
#include "pgroups/layout.hpp"                // IWYU pragma: export
