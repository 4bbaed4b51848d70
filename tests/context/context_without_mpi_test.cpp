// A ParallelContext needs MPI running: made before MPI_Init or after MPI_Finalize it
// throws StateError saying so, before any other MPI call. Its own executable, run
// without mpirun (MPI starts as a singleton in the second test), with GoogleTest's own
// main: the tests run in this order, and MPI can be started only once per process.

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/context/process_group_initializer.hpp"
#include "pgroups/mpi/session.hpp"

namespace pgroups {
namespace {

std::string state_error_of_a_context() {
  try {
    const ParallelContext context(ParallelConfig{}, MPI_COMM_WORLD);
  } catch (const StateError& error) {
    return error.what();
  }
  return "no StateError";
}

// The seed's initializers ask the same query, naming themselves.
std::string state_error_of_an_initializer() {
  try {
    (void)Initializer_Data(0, 1, ParallelConfig{}, 1, 1, 1).init_dist_group();
  } catch (const StateError& error) {
    return error.what();
  }
  return "no StateError";
}

TEST(ParallelContextWithoutMpi, BeforeMpiInitIsAStateError) {
  int initialized = 1;
  MPI_Initialized(&initialized);
  ASSERT_EQ(initialized, 0) << "this test must run first, in a process that has not started MPI";
  EXPECT_EQ(state_error_of_a_context(),
            "a ParallelContext cannot be built before MPI_Init: MPI must be running (call MPI_Init or "
            "MPI_Init_thread first, or hold a pgroups::mpi::Session)");
  EXPECT_EQ(state_error_of_an_initializer(),
            "Initializer_Data.init_dist_group() cannot run before MPI_Init: MPI must be running (call MPI_Init or "
            "MPI_Init_thread first, or hold a pgroups::mpi::Session)");
  EXPECT_EQ(mpi::mpi_state(), mpi::MpiState::not_started);
  EXPECT_FALSE(mpi::is_running());
}

TEST(ParallelContextWithoutMpi, AfterMpiFinalizeIsAStateError) {
  ASSERT_EQ(MPI_Init(nullptr, nullptr), MPI_SUCCESS);
  {
    // While MPI runs, the same context builds (a world of one).
    const ParallelContext context(ParallelConfig{}, MPI_COMM_SELF);
    EXPECT_EQ(context.world_size("global"), 1);
    EXPECT_TRUE(mpi::is_running());
    // And so does the same initializer, on a world of one.
    EXPECT_EQ(Initializer_Data(0, 1, ParallelConfig{}, 1, 1, 1).init_dist_group(MPI_COMM_SELF).group_world_size, 1);
  }
  ASSERT_EQ(MPI_Finalize(), MPI_SUCCESS);
  EXPECT_EQ(mpi::mpi_state(), mpi::MpiState::finalized);
  EXPECT_EQ(state_error_of_a_context(),
            "a ParallelContext cannot be built after MPI_Finalize: MPI must be running (between MPI_Init and "
            "MPI_Finalize, e.g. inside a pgroups::mpi::Session)");
  EXPECT_EQ(state_error_of_an_initializer(),
            "Initializer_Data.init_dist_group() cannot run after MPI_Finalize: MPI must be running (between "
            "MPI_Init and MPI_Finalize, e.g. inside a pgroups::mpi::Session)");
}

}  // namespace
}  // namespace pgroups
