#pragma once
/// \file
/// Session: MPI's lifetime for a program that lets pgroups own it. It initialises MPI
/// with MPI_Init_thread and finalises it on destruction; when MPI is already running
/// (the application initialised it) the session only borrows it and finalises nothing.
/// A library caller that has its own communicator needs no Session at all.

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "pgroups/mpi/communicator.hpp"

namespace pgroups::mpi {

/// Where this process is in MPI's lifetime: before MPI_Init, between MPI_Init and
/// MPI_Finalize, or after MPI_Finalize (MPI cannot be started again then).
enum class MpiState : std::uint8_t { not_started, running, finalized };

/// This process's MPI state, from MPI_Initialized and MPI_Finalized, the two calls MPI
/// allows at any time: pgroups' one "is MPI running" query, which every layer asks.
/// Never throws; O(1).
[[nodiscard]] MpiState mpi_state() noexcept;

/// mpi_state() == MpiState::running.
[[nodiscard]] inline bool is_running() noexcept { return mpi_state() == MpiState::running; }

/// Returns when MPI is running; otherwise throws StateError, on this rank and with no
/// other MPI call, starting with `what` (e.g. "a ParallelContext cannot be built"):
/// "<what> before MPI_Init: MPI must be running (call MPI_Init or MPI_Init_thread
/// first, or hold a pgroups::mpi::Session)", or "<what> after MPI_Finalize: MPI must be
/// running (between MPI_Init and MPI_Finalize, e.g. inside a pgroups::mpi::Session)".
void require_running(std::string_view what);

/// MPI's thread-support levels, weakest first.
enum class ThreadLevel : std::uint8_t { single, funneled, serialized, multiple };

class Session {
 public:
  /// Initialises MPI asking for `required` thread support, unless MPI is already
  /// initialised. When it owns MPI, sets MPI_ERRORS_RETURN on MPI_COMM_WORLD and
  /// MPI_COMM_SELF, so that errors outside any communicator reach check() too.
  /// Throws StateError when MPI was already finalised, BackendError when
  /// MPI_Init_thread fails.
  explicit Session(ThreadLevel required = ThreadLevel::single);
  /// The same, passing the program's arguments to MPI_Init_thread.
  Session(int& argc, char**& argv, ThreadLevel required = ThreadLevel::single);

  /// finalize(), ignoring errors.
  ~Session();

  /// MPI_Finalize now, when this session initialised MPI and it is not finalised yet;
  /// nothing otherwise (the destructor then does nothing either). Collective: every rank
  /// must reach it, and MPI may wait in it for the others, so a program that must not
  /// hang calls it under a watchdog (pgroups/mpi/watchdog.hpp); a job whose ranks
  /// diverged calls abort_job instead. Throws BackendError when MPI_Finalize fails.
  void finalize();

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Whether this session initialised MPI (and will finalise it).
  [[nodiscard]] bool owns_mpi() const noexcept { return owns_; }
  /// The thread support MPI provides; it may be below the one required.
  [[nodiscard]] ThreadLevel provided() const noexcept { return provided_; }
  /// MPI_COMM_WORLD, borrowed.
  [[nodiscard]] Communicator world() const noexcept { return Communicator::borrow(MPI_COMM_WORLD); }

 private:
  void init(int* argc, char*** argv, ThreadLevel required);
  bool owns_ = false;
  ThreadLevel provided_ = ThreadLevel::single;
};

/// MPI's start (a Session: MPI_Init_thread) under a watchdog. MPI_Init waits for every
/// rank of the launch, so a rank that never calls it (a command that needs no MPI started
/// beside this one, a rank that died first) would keep this one waiting forever. Past
/// `timeout` (resolved before: a malformed PGROUPS_TIMEOUT must fail before MPI_Init;
/// zero: none), this rank prints the timeout message naming the step 'init' and ends the
/// process with ExitCode::timeout, calling no MPI (none may be called while MPI_Init
/// runs). The rank and size in the message are the launcher's, when it tells them.
[[nodiscard]] std::unique_ptr<Session> start_session(std::chrono::milliseconds timeout);

/// Ends every process of `comm`'s job with `exit_code` (MPI_Abort): the way out when
/// ranks have diverged and a collective MPI_Finalize could hang.
[[noreturn]] void abort_job(MPI_Comm comm, int exit_code) noexcept;

}  // namespace pgroups::mpi
