#pragma once
/// \file
/// Communicator: the RAII owner of one MPI communicator. An owned communicator is
/// freed when its wrapper is destroyed; a borrowed one (MPI_COMM_WORLD, or a
/// communicator the application keeps) never is. Move-only, so that every handle pgroups
/// creates has exactly one owner and a failure half-way through building a set of
/// communicators frees the ones already built.

#include <mpi.h>

#include <cstdint>

namespace pgroups::mpi {

class Communicator {
 public:
  /// The null communicator (MPI_COMM_NULL); owns nothing.
  Communicator() noexcept = default;

  /// A non-owning wrapper: the handle is never freed and its error handler is left as
  /// the application set it.
  [[nodiscard]] static Communicator borrow(MPI_Comm comm) noexcept;

  /// Takes ownership of `comm` (a handle nobody else frees) and sets MPI_ERRORS_RETURN
  /// on it. MPI_COMM_NULL gives the null communicator; the predefined MPI_COMM_WORLD
  /// and MPI_COMM_SELF are borrowed instead, never freed. If setting the error handler
  /// fails, `comm` is freed and BackendError is thrown.
  [[nodiscard]] static Communicator adopt(MPI_Comm comm);

  /// Frees an owned handle (MPI_Comm_free, errors ignored). After MPI_Finalize the
  /// handle is dropped without a call, as MPI no longer allows one.
  ~Communicator();

  Communicator(Communicator&& other) noexcept;
  /// Frees the handle held before, as the destructor does.
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  [[nodiscard]] MPI_Comm get() const noexcept { return comm_; }
  [[nodiscard]] bool is_null() const noexcept { return comm_ == MPI_COMM_NULL; }
  /// Whether this wrapper frees the handle.
  [[nodiscard]] bool owns() const noexcept { return owned_; }

  /// MPI_Comm_rank / MPI_Comm_size. Precondition: not null. Throw BackendError.
  [[nodiscard]] int rank() const;
  [[nodiscard]] int size() const;

  /// A new owned duplicate (MPI_Comm_dup), with MPI_ERRORS_RETURN. Collective over this
  /// communicator. Precondition: not null. Throws BackendError.
  [[nodiscard]] Communicator dup() const;

  /// Frees an owned handle now, reporting failure: throws BackendError, and the wrapper
  /// is null afterwards either way. A borrowed handle is only forgotten.
  void free();

  /// Number of owned handles alive in this process, all wrappers together: what a leak
  /// check compares before and after. O(1), thread-safe.
  [[nodiscard]] static std::int64_t live_count() noexcept;

 private:
  Communicator(MPI_Comm comm, bool owned) noexcept;
  void release_quietly() noexcept;

  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
};

}  // namespace pgroups::mpi
