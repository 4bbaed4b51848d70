#pragma once
// Helpers for tests that run under mpirun: the world, and what every rank saw.

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_config.hpp"
#include "support/configs.hpp"

namespace pgroups::test {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// What a communicator says about itself, seen from the outside.
struct Observed {
  int rank = -1;
  int size = 0;
  std::vector<std::int64_t> members;  ///< global ranks, by rank in the communicator
};

/// Collective over `comm`: its size, this rank's rank and every member's `global_rank`.
inline Observed observe(MPI_Comm comm, int global_rank) {
  Observed seen;
  MPI_Comm_size(comm, &seen.size);
  MPI_Comm_rank(comm, &seen.rank);
  std::vector<int> members(static_cast<std::size_t>(seen.size));
  MPI_Allgather(&global_rank, 1, MPI_INT, members.data(), 1, MPI_INT, comm);
  seen.members.assign(members.begin(), members.end());
  return seen;
}

/// Whether `value` is the same on every rank of `comm` (one reduction).
inline bool same_everywhere(MPI_Comm comm, std::int64_t value) {
  std::int64_t local[2] = {value, -value};
  std::int64_t reduced[2] = {0, 0};
  MPI_Allreduce(local, reduced, 2, MPI_INT64_T, MPI_MIN, comm);
  return reduced[0] == -reduced[1];
}

/// Configurations that fit a world of `w` ranks, among a spread of shapes covering every
/// tensor mode; each is valid (Layout accepts it).
inline std::vector<ParallelConfig> configs_for_world(std::int64_t w) {
  struct Shape {
    std::int64_t pipeline;
    std::int64_t tensor;
    TensorMode mode;
    std::int64_t depth;
  };
  const Shape shapes[] = {
      {1, 1, TensorMode::none, 0},      {2, 1, TensorMode::none, 0},        {1, 2, TensorMode::tensor_1d, 0},
      {2, 2, TensorMode::tensor_1d, 0}, {2, 2, TensorMode::sequence, 0},    {1, 4, TensorMode::tensor_2d, 0},
      {2, 4, TensorMode::tensor_2d, 0}, {1, 4, TensorMode::tensor_2p5d, 1}, {1, 8, TensorMode::tensor_2p5d, 2},
      {1, 8, TensorMode::tensor_3d, 0}, {3, 2, TensorMode::tensor_1d, 0},   {2, 3, TensorMode::sequence, 0},
  };
  std::vector<ParallelConfig> configs;
  for (const Shape& s : shapes) {
    ParallelConfig c = test::preset_config(w, s.pipeline, s.tensor, s.mode);
    if (s.mode == TensorMode::tensor_2p5d) c.depth = s.depth;
    try {
      validate(c);
      configs.push_back(c);
    } catch (const std::exception&) {
      // Does not fit this world size.
    }
  }
  return configs;
}

/// The configuration of this world with the most modes: the most handles per context.
inline ParallelConfig richest_config() {
  const auto configs = configs_for_world(world_size());
  ParallelConfig best = configs.front();
  std::size_t most = 0;
  for (const ParallelConfig& config : configs) {
    const std::size_t modes = Layout(config).modes().size();
    if (modes > most) {
      most = modes;
      best = config;
    }
  }
  return best;
}

/// Open MPI and MPICH both hand out the lowest free Fortran index for a new handle, so a
/// leak of MPI handles (not only of pgroups' wrappers) shows as a growing index.
inline int fortran_index_of_a_new_communicator() {
  MPI_Comm probe = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &probe);
  const int index = static_cast<int>(MPI_Comm_c2f(probe));
  MPI_Comm_free(&probe);
  return index;
}

}  // namespace pgroups::test
