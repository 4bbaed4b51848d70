#pragma once
/// \file
/// Umbrella of the gloo backend (target pgroups::gloo, built where libgloo-dev is): CPU
/// groups with no MPI, connected over any bootstrap. Needs no MPI; gloo's own headers
/// only in the caller that runs gloo's collectives.

#include "pgroups/gloo/gloo_groups.hpp"  // IWYU pragma: export
