#pragma once
/// \file
/// The MPI backend's names for CreationStrategy, which lies in the pure layer
/// (pgroups/layout/creation_strategy.hpp) so that a build without MPI can name it.

#include "pgroups/layout/creation_strategy.hpp"

namespace pgroups::mpi {

using pgroups::CreationStrategy;
using pgroups::kAllCreationStrategies;
using pgroups::kDefaultCreationStrategy;
using pgroups::parse_creation_strategy;
using pgroups::strategy_deprecation;
using pgroups::strategy_name;

}  // namespace pgroups::mpi
