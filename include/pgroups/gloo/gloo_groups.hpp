#pragma once
/// \file
/// The gloo backend's groups: CPU communicators with no MPI in the process, on gloo's TCP
/// transport (Debian's libgloo-dev, the library torch's CPU groups run on). Every group
/// is a ::gloo::Context of its members; all of a rank's groups are connected at once,
/// each peer's pair address sent in one exchange among members over a Bootstrap
/// (Bootstrap::exchange, pgroups/launch/bootstrap.hpp), so that any bootstrap serves, the
/// ones without a key-value store (MPI, PMIx, a user's callbacks) included, and the job
/// pays a few round trips for all of them rather than a store lookup per pair.
///
/// This header does not include gloo's: the classes are forward-declared, so it compiles
/// wherever pgroups does; the caller includes <gloo/...> to run collectives.

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "pgroups/common/environment.hpp"
#include "pgroups/launch/bootstrap.hpp"

namespace gloo {
class Context;
namespace transport {
class Device;
}  // namespace transport
}  // namespace gloo

namespace pgroups::gloo {

/// The TCP device every group of this process shares. The interface is the one torch's
/// gloo groups use: GLOO_SOCKET_IFNAME (read through `lookup`) names it; otherwise the
/// address of this machine's host name, gloo's own rule. BackendError naming the
/// interface or the host name when gloo cannot open it.
[[nodiscard]] std::shared_ptr<::gloo::transport::Device> open_device(const EnvironmentLookup& lookup);

/// Collective over the bootstrap's world: one connected context per entry of `groups`.
/// `groups[i]` holds the global ranks of this rank's group of the i-th partition, in
/// local-rank order, and every rank passes the same partitions in the same order (so that
/// entry i names the same group on each of its members); an empty entry (a rank outside
/// every group of a partial kind) gets a null context, a one-rank group a context of its
/// own with no connection. The contexts' collectives wait at most `timeout` (zero: no
/// limit); every member of a rank's groups has connected its contexts when the rank
/// returns (a gloo barrier over each group's own pairs). Precondition: every entry that
/// is not empty holds this rank once. Throws TimeoutError naming the step when a rank has
/// not arrived or connected within `timeout`, BackendError when the transport fails;
/// whatever was connected is closed. The device is this process's (open_device(lookup)).
/// A rank whose own part fails (its device, its pairs) throws its error, and every other
/// rank learns it in the agreement
/// that follows the exchange of addresses, throwing BackendError "<step> failed on
/// rank(s) ...; rank r: <message>" (failed_elsewhere) at once rather than waiting for it
/// until the timeout.
[[nodiscard]] std::vector<std::shared_ptr<::gloo::Context>> connect_groups(
    Bootstrap& bootstrap, const EnvironmentLookup& lookup, const std::vector<std::vector<std::int64_t>>& groups,
    std::chrono::milliseconds timeout);

/// The context's own view of its group: this rank's rank in it and the number of
/// members, as gloo holds them (what a check compares with the layout). O(1).
[[nodiscard]] int rank_in(const ::gloo::Context& context) noexcept;
[[nodiscard]] int size_of(const ::gloo::Context& context) noexcept;

/// Collective over `context`: every member's `value`, by its rank in the context (an
/// all-gather), within the context's timeout. BackendError, or TimeoutError when gloo
/// reports a timeout.
[[nodiscard]] std::vector<std::int64_t> all_gather(const std::shared_ptr<::gloo::Context>& context, std::int64_t value);

/// Collective over `context`: returns when every member has entered, with all_gather's errors.
void barrier(const std::shared_ptr<::gloo::Context>& context);

}  // namespace pgroups::gloo
