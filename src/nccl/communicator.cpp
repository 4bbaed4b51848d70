#include "pgroups/nccl/communicator.hpp"

#include <fmt/format.h>

#include <climits>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "check.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/nccl/version.hpp"

namespace pgroups::nccl {
namespace {

using detail::check_nccl;
using detail::nccl_error_message;

// NCCL keeps the commName pointer it is given (init.cc assigns it, copies nothing), so
// the text must outlive every communicator: names are interned for the process, a few
// short strings per job.
const char* interned(const std::string& name) {
  static std::mutex mutex;
  static std::set<std::string> names;
  const std::lock_guard<std::mutex> lock(mutex);
  return names.insert(name).first->c_str();
}

// The creation steps all build the config the same way; only splitShare differs. The
// communicator carries its name (the kinds it serves) where NCCL has commName (2.27),
// so that NCCL_DEBUG output and profilers say which kinds it is for.
ncclConfig_t make_config(const CommOptions& options, [[maybe_unused]] const std::string& name) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = options.nonblocking ? 0 : 1;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  config.commName = interned("pgroups " + name);
#endif
  return config;
}

// Wraps a handle returned by a creation call, then settles the call's outcome: an
// immediate error aborts it, a non-blocking start is waited for under the timeout.
NcclCommunicator settle(ncclResult_t result, ncclComm_t raw, std::string name, const CommOptions& options,
                        std::string_view step, ncclComm_t error_source) {
  NcclCommunicator comm(raw, std::move(name), options.timeout);
  if (result != ncclSuccess && result != ncclInProgress) {
    std::string message = nccl_error_message(step, result, ncclGetLastError(raw != nullptr ? raw : error_source));
    comm.abort();
    throw BackendError(message);
  }
  if (!comm) {
    throw BackendError(fmt::format("{} returned {} but no communicator", step, detail::result_name(result)));
  }
  if (options.nonblocking) comm.wait_ready(step);
  return comm;
}

}  // namespace

NcclCommunicator::NcclCommunicator(ncclComm_t comm, std::string name, std::chrono::milliseconds timeout) noexcept
    : comm_(comm), name_(std::move(name)), timeout_(timeout) {}

NcclCommunicator::NcclCommunicator(NcclCommunicator&& other) noexcept
    : comm_(std::exchange(other.comm_, nullptr)), name_(std::move(other.name_)), timeout_(other.timeout_) {}

NcclCommunicator& NcclCommunicator::operator=(NcclCommunicator&& other) noexcept {
  if (this != &other) {
    try {
      destroy();
    } catch (...) {  // NOLINT(bugprone-empty-catch): destroy() aborted the communicator already
    }
    comm_ = std::exchange(other.comm_, nullptr);
    name_ = std::move(other.name_);
    timeout_ = other.timeout_;
  }
  return *this;
}

NcclCommunicator::~NcclCommunicator() {
  try {
    destroy();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; destroy() aborted on failure
  }
}

int NcclCommunicator::size() const {
  if (comm_ == nullptr) throw StateError("NCCL communicator size requested from an empty NcclCommunicator");
  int count = 0;
  check_nccl(ncclCommCount(comm_, &count), fmt::format("ncclCommCount of communicator '{}'", name_), comm_);
  return count;
}

int NcclCommunicator::rank() const {
  if (comm_ == nullptr) throw StateError("NCCL communicator rank requested from an empty NcclCommunicator");
  int rank = 0;
  check_nccl(ncclCommUserRank(comm_, &rank), fmt::format("ncclCommUserRank of communicator '{}'", name_), comm_);
  return rank;
}

int NcclCommunicator::device() const {
  if (comm_ == nullptr) throw StateError("NCCL communicator device requested from an empty NcclCommunicator");
  int device = 0;
  check_nccl(ncclCommCuDevice(comm_, &device), fmt::format("ncclCommCuDevice of communicator '{}'", name_), comm_);
  return device;
}

void NcclCommunicator::wait_ready(std::string_view step) {
  if (comm_ == nullptr) throw StateError(fmt::format("{}: waited on an empty NcclCommunicator", step));
  ncclResult_t state = ncclInProgress;
  const bool settled = detail::poll_until(
      [&] {
        const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
        if (query != ncclSuccess) state = query;
        return state != ncclInProgress;
      },
      wait_limit(timeout_));
  if (!settled) {
    abort();
    throw TimeoutError(timeout_message(timeout_, step) + "; the communicator was aborted");
  }
  if (state != ncclSuccess) {
    std::string message = nccl_error_message(step, state, ncclGetLastError(comm_));
    abort();
    throw BackendError(message);
  }
}

void NcclCommunicator::destroy() {
  if (comm_ == nullptr) return;
  // Finalize first, under our timeout: ncclCommDestroy alone would finalize internally
  // and block for as long as pending work or peers take.
  const std::string finalize_step = fmt::format("ncclCommFinalize of communicator '{}'", name_);
  const ncclResult_t finalized = ncclCommFinalize(comm_);
  if (finalized != ncclSuccess && finalized != ncclInProgress) {
    std::string message = nccl_error_message(finalize_step, finalized, ncclGetLastError(comm_));
    abort();
    throw BackendError(message);
  }
  wait_ready(finalize_step);
  const ncclResult_t destroyed = ncclCommDestroy(std::exchange(comm_, nullptr));
  // After a finalize, destroy only frees local memory; ncclInProgress is not an error.
  if (destroyed != ncclSuccess && destroyed != ncclInProgress) {
    throw BackendError(nccl_error_message(fmt::format("ncclCommDestroy of communicator '{}'", name_), destroyed,
                                          ncclGetLastError(nullptr)));
  }
}

void NcclCommunicator::abort() noexcept {
  if (comm_ == nullptr) return;
  // Nothing useful can be done with a failed abort: the handle is unusable either way.
  (void)ncclCommAbort(std::exchange(comm_, nullptr));
}

ncclComm_t NcclCommunicator::release() noexcept { return std::exchange(comm_, nullptr); }

NcclCommunicator init_communicator(std::string name, std::int64_t size, std::int64_t rank, const Broadcast& broadcast,
                                   const CommOptions& options) {
  if (size < 1 || size > INT_MAX) {
    throw ConfigError(
        fmt::format("communicator '{}' cannot have {} ranks: NCCL takes sizes in [1, {}]", name, size, INT_MAX));
  }
  if (rank < 0 || rank >= size) {
    throw ConfigError(
        fmt::format("rank {} is outside communicator '{}' of {} ranks (valid: 0 to {})", rank, name, size, size - 1));
  }
  if (!broadcast) throw StateError(fmt::format("communicator '{}' needs a broadcast to share its unique id", name));

  ncclUniqueId id{};
  if (rank == 0) {
    check_nccl(ncclGetUniqueId(&id), fmt::format("ncclGetUniqueId for communicator '{}'", name));
  }
  broadcast(std::as_writable_bytes(std::span<ncclUniqueId, 1>(&id, 1)));

  ncclConfig_t config = make_config(options, name);
  ncclComm_t raw = nullptr;
  const std::string step = fmt::format("ncclCommInitRankConfig of communicator '{}' (rank {} of {})", name, rank, size);
  const ncclResult_t result = ncclCommInitRankConfig(&raw, static_cast<int>(size), id, static_cast<int>(rank), &config);
  return settle(result, raw, std::move(name), options, step, nullptr);
}

NcclCommunicator create_world(std::int64_t world_size, std::int64_t rank, const Broadcast& broadcast,
                              const CommOptions& options) {
  return init_communicator("global", world_size, rank, broadcast, options);
}

NcclCommunicator split_communicator(NcclCommunicator& parent, std::string name, int colour, int key,
                                    const CommOptions& options) {
  if (!parent) {
    throw StateError(fmt::format("communicator '{}' cannot be split from an empty parent communicator", name));
  }
  if (colour < 0) {
    throw ConfigError(
        fmt::format("colour {} for communicator '{}' is invalid: a split colour must be >= 0", colour, name));
  }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
  ncclConfig_t config = make_config(options, name);
  config.splitShare = options.split_share ? 1 : 0;
  ncclComm_t raw = nullptr;
  const std::string step =
      fmt::format("ncclCommSplit of communicator '{}' from '{}' (colour {}, key {})", name, parent.name(), colour, key);
  const ncclResult_t result = ncclCommSplit(parent.get(), colour, key, &raw, &config);
  NcclCommunicator child = settle(result, raw, std::move(name), options, step, parent.get());
  if (options.nonblocking) {
    // The split was a collective on the parent too; a failure there surfaces on it.
    try {
      parent.wait_ready(step);
    } catch (...) {
      child.abort();
      throw;
    }
  }
  return child;
#else
  (void)key;
  (void)options;
  throw StateError(
      fmt::format("communicator '{}' cannot be split: ncclCommSplit needs NCCL 2.18 or later and "
                  "pgroups was compiled against NCCL {}",
                  name, nccl_compile_version()));
#endif
}

void split_out(NcclCommunicator& parent, std::string_view name, const CommOptions& options) {
  if (!parent) {
    throw StateError(fmt::format("communicator '{}' cannot be split from an empty parent communicator", name));
  }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
  ncclConfig_t config = make_config(options, std::string(name));
  config.splitShare = options.split_share ? 1 : 0;
  ncclComm_t raw = nullptr;
  const std::string step =
      fmt::format("ncclCommSplit of communicator '{}' from '{}' (no colour: not a member)", name, parent.name());
  const ncclResult_t result = ncclCommSplit(parent.get(), NCCL_SPLIT_NOCOLOR, 0, &raw, &config);
  if (raw != nullptr) {
    (void)ncclCommAbort(raw);
    throw BackendError(fmt::format("{} returned a communicator", step));
  }
  if (result != ncclSuccess && result != ncclInProgress) {
    throw BackendError(nccl_error_message(step, result, ncclGetLastError(parent.get())));
  }
  // The split was a collective on the parent; a failure there surfaces on it.
  if (options.nonblocking) parent.wait_ready(step);
#else
  (void)options;
  throw StateError(
      fmt::format("communicator '{}' cannot be split: ncclCommSplit needs NCCL 2.18 or later and "
                  "pgroups was compiled against NCCL {}",
                  name, nccl_compile_version()));
#endif
}

}  // namespace pgroups::nccl
