#pragma once
/// \file
/// Umbrella of the models computed from a layout alone (target pgroups::cost): the cost
/// of creating the groups, what the env bootstrap puts on its store, and the NCCL memory
/// of the communicators. No MPI.

#include "pgroups/cost/bootstrap_cost.hpp"  // IWYU pragma: export
#include "pgroups/cost/creation_cost.hpp"  // IWYU pragma: export
#include "pgroups/cost/nccl_memory.hpp"  // IWYU pragma: export
