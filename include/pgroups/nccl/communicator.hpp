#pragma once
/// \file
/// NcclCommunicator, the owner of one NCCL communicator, and the collective calls that
/// create one: a world from a broadcast unique id, a group the same way, or a split of a
/// parent. Creation is non-blocking underneath so that every step is bounded by a
/// timeout; a step that fails or runs out of time aborts what it created and throws.
///
/// This header does not include <nccl.h>: the handle type is forward-declared exactly as
/// nccl.h declares it, so the two can be included together.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "pgroups/launch/timeout.hpp"

struct ncclComm;
/// NCCL's opaque communicator handle (nccl.h: `typedef struct ncclComm* ncclComm_t`).
using ncclComm_t = ncclComm*;

namespace pgroups::nccl {

/// How communicators are created. A value type; the defaults suit production jobs.
struct CommOptions {
  /// Upper bound for each creation step (one init, one split) and for each wait in
  /// verify and destroy; zero means no timeout (pgroups/launch/timeout.hpp, as everywhere in
  /// pgroups). On expiry the communicator is aborted and TimeoutError thrown, with
  /// pgroups::timeout_message naming the step.
  /// It does not bound the bootstrap broadcast, which is the caller's collective.
  std::chrono::milliseconds timeout = kDefaultTimeout;
  /// Create with ncclConfig_t::blocking = 0 and poll ncclCommGetAsyncError, which is
  /// what makes the timeout enforceable. With false, NCCL blocks inside each call and
  /// the timeout only bounds destroy and verify. Communicators created non-blocking stay
  /// non-blocking: their later NCCL calls may return ncclInProgress (see wait_ready).
  bool nonblocking = true;
  /// Create mode communicators with one ncclCommSplit of the world per mode. When false,
  /// or when pgroups was compiled against NCCL < 2.18, each group is created on its own
  /// with ncclCommInitRankConfig and a unique id broadcast over the group.
  bool use_split = true;
  /// ncclConfig_t::splitShare for splits: children reuse the parent's resources
  /// (buffers, channels, proxy), which saves GPU memory per mode.
  bool split_share = true;
};

/// Broadcasts `bytes` in place from the group member with local rank 0 to every other
/// member: a collective over the group the function stands for. Used to hand out an
/// ncclUniqueId; must throw (any pgroups::Error) on failure. See mpi_bootstrap.hpp for
/// one over an MPI_Comm.
using Broadcast = std::function<void(std::span<std::byte> bytes)>;

/// Owns one NCCL communicator: ncclCommDestroy (after ncclCommFinalize) when it goes out
/// of scope, ncclCommAbort on every error path. Move-only; a moved-from or default
/// object is empty. Not thread-safe, like the handle it wraps.
class NcclCommunicator {
 public:
  NcclCommunicator() noexcept = default;
  /// Takes ownership of `comm` (may be null). `name` labels error messages ("global",
  /// "2d_row", ...); `timeout` bounds wait_ready() and destroy().
  NcclCommunicator(ncclComm_t comm, std::string name, std::chrono::milliseconds timeout) noexcept;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  NcclCommunicator(NcclCommunicator&& other) noexcept;
  /// Destroys the communicator held so far (as the destructor does), then takes `other`'s.
  NcclCommunicator& operator=(NcclCommunicator&& other) noexcept;
  /// Finalizes and destroys; on an error or timeout there, aborts. Never throws.
  /// ncclCommDestroy is an intra-node collective: destroy communicators in the same
  /// order on every rank of a node.
  ~NcclCommunicator();

  [[nodiscard]] ncclComm_t get() const noexcept { return comm_; }
  [[nodiscard]] explicit operator bool() const noexcept { return comm_ != nullptr; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }

  /// ncclCommCount, ncclCommUserRank, ncclCommCuDevice. Throw StateError when empty and
  /// BackendError when NCCL fails.
  [[nodiscard]] int size() const;
  [[nodiscard]] int rank() const;
  [[nodiscard]] int device() const;

  /// Polls ncclCommGetAsyncError until the communicator leaves ncclInProgress. Returns
  /// when it is ready. On an error state it aborts the communicator and throws
  /// BackendError; after timeout() it aborts and throws TimeoutError naming `step`
  /// and the timeout. StateError when empty.
  void wait_ready(std::string_view step);

  /// Finalizes (waiting at most timeout()) and destroys; the object is empty afterwards.
  /// On failure the communicator is aborted instead and BackendError or TimeoutError is
  /// thrown. No-op when empty.
  void destroy();
  /// ncclCommAbort: frees the communicator without waiting for peers or pending work.
  /// The object is empty afterwards. Never throws; no-op when empty.
  void abort() noexcept;
  /// Gives up ownership: returns the handle and leaves the object empty.
  [[nodiscard]] ncclComm_t release() noexcept;

 private:
  ncclComm_t comm_ = nullptr;
  std::string name_;
  std::chrono::milliseconds timeout_{0};
};

/// Creates a communicator of `size` ranks in which the caller is `rank`, the way a world
/// is created: the member with rank 0 calls ncclGetUniqueId, `broadcast` hands the id to
/// the others, and every member calls ncclCommInitRankConfig. Collective over the
/// members, which must all pass the same size and options. The CUDA device current on
/// the calling thread (see bind_device) becomes the communicator's device.
/// Throws ConfigError for sizes outside [1, INT_MAX] or a rank outside [0, size),
/// BackendError for an NCCL or CUDA failure, TimeoutError when initialisation does not
/// complete within options.timeout; whatever `broadcast` throws passes through.
[[nodiscard]] NcclCommunicator init_communicator(std::string name, std::int64_t size, std::int64_t rank,
                                                 const Broadcast& broadcast, const CommOptions& options = {});

/// init_communicator named "global": the world communicator of the job.
[[nodiscard]] NcclCommunicator create_world(std::int64_t world_size, std::int64_t rank, const Broadcast& broadcast,
                                            const CommOptions& options = {});

/// One ncclCommSplit of `parent` (non-blocking, splitShare per options, same timeout
/// handling): every rank of the parent calls it; those with the same `colour` form one
/// communicator, ordered by `key`. Throws StateError when the parent is empty or this
/// build's NCCL has no ncclCommSplit (see split_available()), ConfigError for a negative
/// colour, BackendError and TimeoutError as init_communicator does.
[[nodiscard]] NcclCommunicator split_communicator(NcclCommunicator& parent, std::string name, int colour, int key,
                                                  const CommOptions& options = {});

/// The part of a split that a rank outside every new communicator plays: one
/// ncclCommSplit of `parent` with NCCL_SPLIT_NOCOLOR, which every rank of the parent must
/// call together with the members' split_communicator. `name` is the communicator the
/// others create, for messages. Throws as split_communicator; BackendError when NCCL
/// returns a communicator after all (which is then aborted).
void split_out(NcclCommunicator& parent, std::string_view name, const CommOptions& options = {});

}  // namespace pgroups::nccl
