#include "pgroups/mpi/session.hpp"

#include <cstdlib>

#include "pgroups/layout/error.hpp"
#include "pgroups/mpi/error.hpp"

namespace pgroups::mpi {
namespace {

int to_mpi(ThreadLevel level) noexcept {
  switch (level) {
    case ThreadLevel::single: return MPI_THREAD_SINGLE;
    case ThreadLevel::funneled: return MPI_THREAD_FUNNELED;
    case ThreadLevel::serialized: return MPI_THREAD_SERIALIZED;
    case ThreadLevel::multiple: return MPI_THREAD_MULTIPLE;
  }
  return MPI_THREAD_SINGLE;
}

ThreadLevel from_mpi(int level) noexcept {
  if (level == MPI_THREAD_MULTIPLE) return ThreadLevel::multiple;
  if (level == MPI_THREAD_SERIALIZED) return ThreadLevel::serialized;
  if (level == MPI_THREAD_FUNNELED) return ThreadLevel::funneled;
  return ThreadLevel::single;
}

}  // namespace

Session::Session(ThreadLevel required) { init(nullptr, nullptr, required); }

Session::Session(int& argc, char**& argv, ThreadLevel required) { init(&argc, &argv, required); }

void Session::init(int* argc, char*** argv, ThreadLevel required) {
  int finalized = 0;
  check(MPI_Finalized(&finalized), "MPI_Finalized");
  if (finalized) throw StateError("MPI was already finalized in this process; it cannot be initialized again");
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    check(MPI_Query_thread(&provided), "MPI_Query_thread");
    provided_ = from_mpi(provided);
    return;
  }
  // Before MPI_Init_thread returns, errors can only be fatal; its code is still checked
  // for implementations that do return one.
  check(MPI_Init_thread(argc, argv, to_mpi(required), &provided), "MPI_Init_thread");
  owns_ = true;
  provided_ = from_mpi(provided);
  try {
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler(MPI_COMM_WORLD)");
    check(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler(MPI_COMM_SELF)");
  } catch (...) {
    // Already failing: the first error is the one to report.
    static_cast<void>(MPI_Finalize());
    throw;
  }
}

Session::~Session() {
  try {
    finalize();
  } catch (...) {  // NOLINT(bugprone-empty-catch): nothing is left to do with a failed MPI_Finalize
  }
}

void Session::finalize() {
  if (!owns_) return;
  int finalized = 0;
  check(MPI_Finalized(&finalized), "MPI_Finalized");
  if (finalized != 0) return;
  owns_ = false;
  check(MPI_Finalize(), "MPI_Finalize");
}

void abort_job(MPI_Comm comm, int exit_code) noexcept {
  MPI_Abort(comm, exit_code);
  // MPI_Abort may return in theory; the process must not continue either way.
  std::_Exit(exit_code);
}

}  // namespace pgroups::mpi
