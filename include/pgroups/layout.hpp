#pragma once
/// \file
/// Umbrella of the pure layout layer (target pgroups::layout): no MPI, CUDA or NCCL.

#include "pgroups/layout/agreement_record.hpp"  // IWYU pragma: export
#include "pgroups/layout/cluster.hpp"  // IWYU pragma: export
#include "pgroups/layout/communicator_sharing.hpp"  // IWYU pragma: export
#include "pgroups/layout/creation_strategy.hpp"  // IWYU pragma: export
#include "pgroups/layout/group_check.hpp"  // IWYU pragma: export
#include "pgroups/layout/layout.hpp"  // IWYU pragma: export
#include "pgroups/layout/locality.hpp"  // IWYU pragma: export
#include "pgroups/layout/mesh.hpp"  // IWYU pragma: export
#include "pgroups/layout/mesh_config.hpp"  // IWYU pragma: export
#include "pgroups/layout/parallel_config.hpp"  // IWYU pragma: export
#include "pgroups/layout/parallel_mode.hpp"  // IWYU pragma: export
#include "pgroups/layout/partition_key.hpp"  // IWYU pragma: export
#include "pgroups/layout/placement.hpp"  // IWYU pragma: export
#include "pgroups/layout/rank_map.hpp"  // IWYU pragma: export
#include "pgroups/layout/rank_view.hpp"  // IWYU pragma: export
#include "pgroups/layout/recovery.hpp"  // IWYU pragma: export
#include "pgroups/layout/virtual_pipeline.hpp"  // IWYU pragma: export
