#include "pgroups/mpi/session.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/launcher.hpp"
#include "pgroups/mpi/check.hpp"
#include "pgroups/mpi/watchdog.hpp"

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

MpiState mpi_state() noexcept {
  int finalized = 0;
  int initialized = 0;
  // Their codes are not checked: both are allowed at any time, and this must not throw.
  MPI_Finalized(&finalized);
  if (finalized != 0) return MpiState::finalized;
  MPI_Initialized(&initialized);
  return initialized != 0 ? MpiState::running : MpiState::not_started;
}

void require_running(std::string_view what) {
  switch (mpi_state()) {
    case MpiState::running: return;
    case MpiState::not_started:
      throw StateError(
          fmt::format("{} before MPI_Init: MPI must be running (call MPI_Init or MPI_Init_thread first, "
                      "or hold a pgroups::mpi::Session)",
                      what));
    case MpiState::finalized:
      throw StateError(
          fmt::format("{} after MPI_Finalize: MPI must be running (between MPI_Init and MPI_Finalize, "
                      "e.g. inside a pgroups::mpi::Session)",
                      what));
  }
}

Session::Session(ThreadLevel required) { init(nullptr, nullptr, required); }

Session::Session(int& argc, char**& argv, ThreadLevel required) { init(&argc, &argv, required); }

void Session::init(int* argc, char*** argv, ThreadLevel required) {
  const MpiState state = mpi_state();
  if (state == MpiState::finalized) {
    throw StateError("MPI was already finalized in this process; it cannot be initialized again");
  }
  int provided = MPI_THREAD_SINGLE;
  if (state == MpiState::running) {
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
  if (!owns_ || mpi_state() == MpiState::finalized) return;
  owns_ = false;
  check(MPI_Finalize(), "MPI_Finalize");
}

std::unique_ptr<Session> start_session(std::chrono::milliseconds timeout) {
  const LauncherInfo launcher = detect_launcher();
  const bool placed = launcher.rank && launcher.world_size && *launcher.world_size <= INT32_MAX;
  const int rank = placed ? static_cast<int>(*launcher.rank) : -1;
  const int size = placed ? static_cast<int>(*launcher.world_size) : 0;
  Watchdog watchdog(Deadline(timeout), rank, size,
                    [](const std::string& message) { end_process_on_timeout(message, false); });
  const Watchdog::Guard guard =
      watchdog.enter({"init", "the start of MPI (MPI_Init_thread), which every rank of the launch must call"});
  return std::make_unique<Session>();
}

void abort_job(MPI_Comm comm, int exit_code) noexcept {
  MPI_Abort(comm, exit_code);
  // MPI_Abort may return in theory; the process must not continue either way.
  std::_Exit(exit_code);
}

}  // namespace pgroups::mpi
