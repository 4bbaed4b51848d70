#include "pgroups/mpi/communicator.hpp"

#include <atomic>
#include <utility>

#include "pgroups/mpi/check.hpp"
#include "pgroups/mpi/session.hpp"

namespace pgroups::mpi {
namespace {

std::atomic<std::int64_t> live_handles{0};

bool is_predefined(MPI_Comm comm) noexcept { return comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF; }

bool mpi_finalized() noexcept { return mpi_state() == MpiState::finalized; }

}  // namespace

Communicator::Communicator(MPI_Comm comm, bool owned) noexcept : comm_(comm), owned_(owned) {
  if (owned_) live_handles.fetch_add(1, std::memory_order_relaxed);
}

Communicator Communicator::borrow(MPI_Comm comm) noexcept { return Communicator(comm, false); }

Communicator Communicator::adopt(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || is_predefined(comm)) return borrow(comm);
  Communicator owned(comm, true);
  check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return owned;
}

Communicator::~Communicator() { release_quietly(); }

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)), owned_(std::exchange(other.owned_, false)) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    release_quietly();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

void Communicator::release_quietly() noexcept {
  if (owned_ && comm_ != MPI_COMM_NULL) {
    if (!mpi_finalized()) MPI_Comm_free(&comm_);
    live_handles.fetch_sub(1, std::memory_order_relaxed);
  }
  comm_ = MPI_COMM_NULL;
  owned_ = false;
}

int Communicator::rank() const {
  int rank = 0;
  check(MPI_Comm_rank(comm_, &rank), "MPI_Comm_rank");
  return rank;
}

int Communicator::size() const {
  int size = 0;
  check(MPI_Comm_size(comm_, &size), "MPI_Comm_size");
  return size;
}

Communicator Communicator::dup() const {
  MPI_Comm copy = MPI_COMM_NULL;
  check(MPI_Comm_dup(comm_, &copy), "MPI_Comm_dup");
  return adopt(copy);
}

void Communicator::free() {
  if (!owned_ || comm_ == MPI_COMM_NULL) {
    comm_ = MPI_COMM_NULL;
    owned_ = false;
    return;
  }
  MPI_Comm handle = std::exchange(comm_, MPI_COMM_NULL);
  owned_ = false;
  live_handles.fetch_sub(1, std::memory_order_relaxed);
  if (!mpi_finalized()) check(MPI_Comm_free(&handle), "MPI_Comm_free");
}

std::int64_t Communicator::live_count() noexcept { return live_handles.load(std::memory_order_relaxed); }

}  // namespace pgroups::mpi
