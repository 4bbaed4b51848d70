#pragma once
// The gloo backend's side of a context built on a bootstrap, internal to pgroups::context:
// one gloo context per distinct partition this rank is in, all connected in one step.
// Compiled from gloo_kinds.cpp where pgroups::gloo exists, gloo_kinds_none.cpp otherwise.
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "live_groups.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups::detail {

/// Collective over the bootstrap's world: gives every kind of `created` (planned_groups'
/// entries: membership and sharing settled) its gloo context, and `world` the world's
/// (null when no kind is the whole world).
/// A kind shares its owner's context, a whole-world kind the world's, and every one-rank
/// kind one context of this rank alone; a rank outside every group of a partial kind gets
/// none. Waits at most `timeout` (zero: no limit). Throws pgroups::gloo::connect_groups'
/// errors, and ConfigError in a build without gloo.
void connect_gloo_kinds(std::vector<KindGroup>& created, std::shared_ptr<::gloo::Context>& world, const Layout& layout,
                        std::int64_t global_rank, Bootstrap& bootstrap, std::chrono::milliseconds timeout);

}  // namespace pgroups::detail
