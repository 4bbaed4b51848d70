// GoogleTest under mpirun: every rank runs every test, collectives included, in the same
// order. Rank 0 prints the usual report; other ranks print only their failures, tagged
// with the rank. After each test all ranks agree whether it failed anywhere, so rank 0
// names tests that failed only elsewhere; the process fails if any rank failed.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "pgroups/mpi/session.hpp"

namespace {

// Prints a non-zero rank's failed assertions, which its silenced default printer would
// have shown.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    fmt::print(stderr, "[rank {}] {}:{}: failure\n{}\n", rank_, result.file_name() ? result.file_name() : "?",
               result.line_number(), result.message());
  }

 private:
  int rank_;
};

// Agrees, after each test, on the ranks where it failed; rank 0 reports them.
class FailureAgreement : public ::testing::EmptyTestEventListener {
 public:
  FailureAgreement(int rank, int size) : rank_(rank), size_(size) {}
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const int failed = info.result()->Failed() ? 1 : 0;
    std::vector<int> all(static_cast<std::size_t>(size_));
    MPI_Allgather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    if (rank_ != 0) return;
    std::string ranks;
    for (int r = 1; r < size_; ++r) {
      if (all[static_cast<std::size_t>(r)] != 0) ranks += fmt::format("{}{}", ranks.empty() ? "" : ", ", r);
    }
    if (!ranks.empty()) {
      fmt::print("[  FAILED  ] {}.{} failed on rank(s) {}\n", info.test_suite_name(), info.name(), ranks);
    }
  }

 private:
  int rank_;
  int size_;
};

}  // namespace

int main(int argc, char** argv) {
  pgroups::mpi::Session session(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  listeners.Append(new FailureAgreement(rank, size));

  const int local = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&local, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && worst != local) fmt::print("Some tests failed on other ranks (see [rank N] lines above).\n");
  return worst;
}
