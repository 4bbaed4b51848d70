#pragma once
/// \file
/// Umbrella header: the pure parts of pgroups (configuration, validation, layout, cost
/// model), with no MPI or NCCL dependency. The communicators live in
/// pgroups/parallel_context.hpp.

#include "pgroups/communicator_sharing.hpp"
#include "pgroups/config_reader.hpp"
#include "pgroups/creation_cost.hpp"
#include "pgroups/creation_steps.hpp"
#include "pgroups/error.hpp"
#include "pgroups/group_check.hpp"
#include "pgroups/layout.hpp"
#include "pgroups/mesh.hpp"
#include "pgroups/parallel_config.hpp"
#include "pgroups/parallel_mode.hpp"
