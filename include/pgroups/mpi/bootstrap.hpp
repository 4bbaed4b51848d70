#pragma once
/// \file
/// The MPI bootstrap (pgroups/launch/bootstrap.hpp) over any communicator: the rank and
/// size are the communicator's, the node's are counted once by MPI_COMM_TYPE_SHARED
/// (node_info), and the all-gather and the barrier are nonblocking collectives waited
/// for until their deadline (pgroups/mpi/deadline.hpp). register_bootstrap() makes it the
/// maker of BootstrapKind::mpi behind launch's one door (start_bootstrap).

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/mpi/communicator.hpp"
#include "pgroups/mpi/session.hpp"

namespace pgroups::mpi {

/// Registers the MPI bootstrap's maker with launch (register_bootstrap_maker): MPI started
/// under a watchdog (start_session) unless it runs already, the bootstrap over
/// MPI_COMM_WORLD holding the session. Every front door built with MPI calls it once.
void register_bootstrap();

class MpiBootstrap final : public Bootstrap {
 public:
  /// Collective over `comm` (the node query); `comm` is duplicated, so that the
  /// bootstrap's collectives never match the caller's. Throws BackendError.
  explicit MpiBootstrap(const Communicator& comm);
  /// The bootstrap of MPI_COMM_WORLD through `session`, which it holds: when the session
  /// started MPI, destroying the bootstrap finalizes MPI, under a watchdog of `timeout`
  /// (zero: none) that ends a rank still in MPI_Finalize at the deadline.
  MpiBootstrap(std::unique_ptr<Session> session, std::chrono::milliseconds timeout);
  ~MpiBootstrap() override;

  [[nodiscard]] BootstrapKind kind() const noexcept override { return BootstrapKind::mpi; }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] int local_rank() const noexcept override { return local_rank_; }
  [[nodiscard]] int local_size() const noexcept override { return local_size_; }

  [[nodiscard]] std::vector<std::string> all_gather(std::string_view bytes, std::chrono::milliseconds timeout,
                                                    std::string_view what) override;
  void barrier(std::chrono::milliseconds timeout, std::string_view what) override;

 private:
  std::unique_ptr<Session> session_;  // declared first: finalized after comm_ is freed
  std::chrono::milliseconds timeout_{0};
  Communicator comm_;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
};

}  // namespace pgroups::mpi
