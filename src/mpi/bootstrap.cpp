#include "pgroups/mpi/bootstrap.hpp"

#include <utility>

#include "pgroups/mpi/deadline.hpp"
#include "pgroups/mpi/node.hpp"
#include "pgroups/mpi/watchdog.hpp"

namespace pgroups::mpi {

void register_bootstrap() {
  register_bootstrap_maker(BootstrapKind::mpi, [](std::chrono::milliseconds timeout) -> std::unique_ptr<Bootstrap> {
    return std::make_unique<MpiBootstrap>(start_session(timeout), timeout);
  });
}

MpiBootstrap::MpiBootstrap(const Communicator& comm) : comm_(comm.dup()), rank_(comm_.rank()), size_(comm_.size()) {
  const NodeInfo node = node_info(comm_);
  local_rank_ = static_cast<int>(node.local_rank);
  local_size_ = static_cast<int>(node.processes);
}

MpiBootstrap::MpiBootstrap(std::unique_ptr<Session> session, std::chrono::milliseconds timeout)
    : MpiBootstrap(session->world()) {
  session_ = std::move(session);
  timeout_ = timeout;
}

MpiBootstrap::~MpiBootstrap() {
  if (!session_ || !session_->owns_mpi()) return;
  try {
    comm_.free();
    // MPI_Finalize waits for the other ranks: a rank still in it at the deadline ends.
    Watchdog watchdog(Deadline(timeout_), rank_, size_);
    const Watchdog::Guard guard = watchdog.enter({"finalize", "MPI_Finalize, the end of the job"});
    session_->finalize();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor; the session's own ignores it too
  }
}

std::vector<std::string> MpiBootstrap::all_gather(std::string_view bytes, std::chrono::milliseconds timeout,
                                                  std::string_view what) {
  return all_gather_until(comm_, bytes, Deadline(timeout), {"all-gather", what});
}

void MpiBootstrap::barrier(std::chrono::milliseconds timeout, std::string_view what) {
  barrier_until(comm_, Deadline(timeout), {"barrier", what});
}

}  // namespace pgroups::mpi
