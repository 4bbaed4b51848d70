#pragma once
/// \file
/// Umbrella of the context layer (target pgroups::context): ParallelContext and
/// Colossal-AI's process_group_initializer API. Needs MPI.

#include "pgroups/context/backend.hpp"  // IWYU pragma: export
#include "pgroups/context/bootstrap_agreement.hpp"  // IWYU pragma: export
#include "pgroups/context/context_options.hpp"  // IWYU pragma: export
#include "pgroups/context/creation_steps.hpp"  // IWYU pragma: export
#include "pgroups/context/group_handle.hpp"  // IWYU pragma: export
#include "pgroups/context/mpi_comm.hpp"  // IWYU pragma: export
#include "pgroups/context/parallel_context.hpp"  // IWYU pragma: export
#include "pgroups/context/process_group_initializer.hpp"  // IWYU pragma: export
