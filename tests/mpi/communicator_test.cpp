// Communicator owns what it creates and nothing else; MPI errors become BackendError
// with the call and MPI's own text.

#include <gtest/gtest.h>

#include <utility>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/mpi/check.hpp"
#include "pgroups/mpi/communicator.hpp"
#include "pgroups/mpi/node.hpp"

namespace pgroups::mpi {
namespace {

TEST(Communicator, DupIsOwnedAndFreedWhenTheWrapperDies) {
  const std::int64_t before = Communicator::live_count();
  {
    const Communicator copy = Communicator::borrow(MPI_COMM_WORLD).dup();
    EXPECT_TRUE(copy.owns());
    EXPECT_FALSE(copy.is_null());
    EXPECT_EQ(copy.size(), test::world_size());
    EXPECT_EQ(copy.rank(), test::world_rank());
    EXPECT_EQ(Communicator::live_count(), before + 1);
  }
  EXPECT_EQ(Communicator::live_count(), before);
}

TEST(Communicator, DupReturnsErrorsInsteadOfAborting) {
  const Communicator copy = Communicator::borrow(MPI_COMM_WORLD).dup();
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(copy.get(), &handler);
  EXPECT_EQ(handler, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&handler);
}

TEST(Communicator, BorrowedWorldIsNeverFreed) {
  const std::int64_t before = Communicator::live_count();
  {
    const Communicator world = Communicator::borrow(MPI_COMM_WORLD);
  }
  {
    const Communicator adopted = Communicator::adopt(MPI_COMM_WORLD);
    EXPECT_FALSE(adopted.owns());
  }
  {
    Communicator self = Communicator::adopt(MPI_COMM_SELF);
    self.free();
  }
  EXPECT_EQ(Communicator::live_count(), before);
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(MPI_Barrier(MPI_COMM_SELF), MPI_SUCCESS);
}

TEST(Communicator, MoveTransfersOwnershipAndLeavesTheSourceNull) {
  const std::int64_t before = Communicator::live_count();
  Communicator first = Communicator::borrow(MPI_COMM_WORLD).dup();
  const MPI_Comm handle = first.get();
  Communicator second = std::move(first);
  EXPECT_TRUE(first.is_null());  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
  EXPECT_FALSE(first.owns());
  EXPECT_EQ(second.get(), handle);
  EXPECT_EQ(Communicator::live_count(), before + 1);

  // Move assignment frees what the target held.
  Communicator third = Communicator::borrow(MPI_COMM_WORLD).dup();
  EXPECT_EQ(Communicator::live_count(), before + 2);
  third = std::move(second);
  EXPECT_EQ(Communicator::live_count(), before + 1);
  EXPECT_EQ(third.get(), handle);
}

TEST(Communicator, ExplicitFreeNullsTheWrapperAndIsIdempotent) {
  const std::int64_t before = Communicator::live_count();
  Communicator copy = Communicator::borrow(MPI_COMM_WORLD).dup();
  copy.free();
  EXPECT_TRUE(copy.is_null());
  EXPECT_EQ(Communicator::live_count(), before);
  copy.free();
  EXPECT_EQ(Communicator::live_count(), before);
}

TEST(Communicator, AdoptingNullGivesTheNullCommunicator) {
  const Communicator none = Communicator::adopt(MPI_COMM_NULL);
  EXPECT_TRUE(none.is_null());
  EXPECT_FALSE(none.owns());
}

TEST(MpiErrors, CheckThrowsBackendErrorNamingTheCallAndMpisText) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(MPI_ERR_COMM, text, &length);
  try {
    check(MPI_ERR_COMM, "MPI_Example");
    FAIL() << "no exception";
  } catch (const BackendError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("MPI_Example failed: ", 0), 0U) << message;
    EXPECT_NE(message.find(std::string(text, static_cast<std::size_t>(length))), std::string::npos) << message;
    EXPECT_EQ(error.exit_code(), ExitCode::backend);
  }
  EXPECT_NO_THROW(check(MPI_SUCCESS, "MPI_Example"));
}

TEST(MpiErrors, AFailingMpiCallSurfacesAsBackendError) {
  // The null communicator is invalid for MPI_Comm_size; the session made MPI return the
  // error rather than abort.
  const Communicator none;
  try {
    (void)none.size();
    FAIL() << "no exception";
  } catch (const BackendError& error) {
    EXPECT_NE(std::string(error.what()).find("MPI_Comm_size failed: "), std::string::npos) << error.what();
  }
}

TEST(NodeInfo, EveryRankOfThisSingleMachineJobSharesTheNode) {
  const NodeInfo node = node_info(Communicator::borrow(MPI_COMM_WORLD));
  EXPECT_EQ(node.processes, test::world_size());
  EXPECT_EQ(node.local_rank, test::world_rank());
}

}  // namespace
}  // namespace pgroups::mpi
