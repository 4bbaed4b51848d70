#pragma once
/// \file
/// Agreeing on the outcome of a local step over a bootstrap (pgroups/launch/bootstrap.hpp),
/// as pgroups/mpi/outcome.hpp does over MPI: a step that can fail on some ranks only
/// (binding a device) must not leave the ranks that succeeded waiting in a collective the
/// others never reach. Both say the same words.

#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/launch/bootstrap.hpp"

namespace pgroups {

/// The message of `error`: its what(), or a note for one that is no std::exception.
[[nodiscard]] std::string message_of(const std::exception_ptr& error);

/// What a rank whose step succeeded says when others failed: "<step> failed on rank(s)
/// <runs>; rank <r>: <message>", with the lowest failed rank's message.
[[nodiscard]] std::string failed_elsewhere(std::string_view step, const std::vector<int>& failed_ranks,
                                           std::string_view first_message);

/// Collective over the bootstrap's world: every rank passes the exception its local step
/// threw (null when it succeeded). Returns when no rank failed, after one all-gather
/// (bounded by `timeout`). Otherwise a failed rank rethrows its own exception and every
/// other rank throws BackendError(failed_elsewhere(...)).
void require_success_everywhere(Bootstrap& bootstrap, const std::exception_ptr& local, std::string_view step,
                                std::chrono::milliseconds timeout);

/// What a rank says of its local step in that agreement: empty for a success, "!" and the
/// message for a failure. For a collective that carries the agreement with other traffic
/// (Bootstrap::exchange_and_agree), whose verdict then goes to require_success_in.
[[nodiscard]] std::string outcome_text(const std::exception_ptr& local);

/// require_success_everywhere's judgement of an agreement on outcome_text already made:
/// `differing` is what all_gather_if_differing returned.
void require_success_in(const std::optional<std::vector<std::string>>& differing, const std::exception_ptr& local,
                        std::string_view step);

}  // namespace pgroups
