#pragma once
/// \file
/// Deadlines for the collective steps where ranks wait for each other. A rank that never
/// arrives (stalled, dead, or launched with the wrong arguments) would otherwise keep the
/// others waiting forever; the *_until functions below wait for a nonblocking collective
/// only until a deadline and then throw TimeoutError naming the step.
///
/// MPI cannot cancel a collective. After a timeout the operation stays pending: whatever
/// it reads or writes is kept alive for the rest of the process, and the communicator it
/// was started on must not be used for collectives again (free it, or end the job).

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/launch/timeout.hpp"
#include "pgroups/mpi/communicator.hpp"
#include "pgroups/mpi/wait_clock.hpp"

namespace pgroups::mpi {

/// The moment by which a step must be done, and the timeout it was computed from (which
/// messages name). A value type; cheap to copy.
class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  /// No limit: waits forever.
  Deadline() noexcept = default;
  /// `timeout` from now on `clock` (which must outlive the deadline and its copies);
  /// zero or less means no limit (pgroups::is_limited).
  explicit Deadline(std::chrono::milliseconds timeout, const WaitClock& clock = steady_wait_clock()) noexcept;

  [[nodiscard]] bool is_limited() const noexcept { return pgroups::is_limited(timeout_); }
  /// The timeout this deadline was made from; zero when unlimited.
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  /// When it expires. Precondition: is_limited().
  [[nodiscard]] Clock::time_point at() const noexcept { return at_; }
  /// Whether it has passed; never for an unlimited deadline.
  [[nodiscard]] bool expired() const noexcept { return is_limited() && clock_->now() >= at_; }
  /// The clock it is measured on; the steady clock unless one was given.
  [[nodiscard]] const WaitClock& clock() const noexcept { return *clock_; }

 private:
  std::chrono::milliseconds timeout_{0};
  Clock::time_point at_{};
  const WaitClock* clock_ = &steady_wait_clock();
};

/// A step at which every rank waits for the others: a short name (what hooks and tests
/// match) and a description for messages, e.g. {"agreement", "the configuration
/// agreement"}. Both views must outlive the call they are passed to.
struct Step {
  std::string_view name;
  std::string_view description;
};

using pgroups::seconds_text;

/// pgroups::timeout_message for `step` on this rank, e.g. "timed out after 5 s waiting
/// for all ranks at the configuration agreement (step 'agreement', rank 0 of 4)": the
/// message of every TimeoutError of this layer, and of the watchdog.
[[nodiscard]] std::string timeout_message(std::chrono::milliseconds timeout, const Step& step, int rank, int size);

/// For a step about to start: throws TimeoutError(timeout_message(...)) for this rank of
/// `comm` when `deadline` has passed, so that no collective is started that could only
/// time out. Nothing is left pending. O(1) unless it throws.
void throw_if_expired(const Deadline& deadline, const Step& step, const Communicator& comm);

/// Collective over `comm`: MPI_Comm_idup, waited for until `deadline`. Returns the owned
/// duplicate, with MPI_ERRORS_RETURN. Throws TimeoutError naming `step` (see the file
/// comment for what stays pending) or BackendError.
[[nodiscard]] Communicator dup_until(const Communicator& comm, const Deadline& deadline, const Step& step);

/// Collective over `comm`: MPI_Ibarrier, waited for until `deadline`. Throws TimeoutError
/// naming `step`, or BackendError.
void barrier_until(const Communicator& comm, const Deadline& deadline, const Step& step);

/// Collective over `comm`: the element-wise minimum of `values` over all ranks
/// (MPI_Iallreduce with MPI_MIN), waited for until `deadline`. Every rank passes as many
/// values. Throws TimeoutError naming `step`, or BackendError. O(values).
[[nodiscard]] std::vector<std::int64_t> min_until(const Communicator& comm, std::span<const std::int64_t> values,
                                                  const Deadline& deadline, const Step& step);

/// Collective over `comm`: every rank's `bytes`, index = rank (MPI_Iallgather of the
/// lengths, then MPI_Iallgatherv), each waited for until `deadline`. Throws TimeoutError
/// naming `step`, or BackendError. O(total bytes).
[[nodiscard]] std::vector<std::string> all_gather_until(const Communicator& comm, std::string_view bytes,
                                                        const Deadline& deadline, const Step& step);

}  // namespace pgroups::mpi
