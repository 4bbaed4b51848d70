#pragma once
/// \file
/// Checking, before anything that depends on it, that every rank of a job holds the same
/// configuration: ranks that disagree would otherwise compute different group counts
/// and hang in mismatched collectives.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "pgroups/mpi/communicator.hpp"
#include "pgroups/mpi/deadline.hpp"

namespace pgroups::mpi {

/// Collective over `comm`: returns when every rank passed the same `text` (a record of
/// pgroups/layout/agreement_record.hpp, or any text). It costs one
/// MPI_Allreduce of a 64-bit hash of `text` (its minimum and maximum at once). When the
/// hashes differ, two more collectives gather every rank's text, and every rank throws
/// the same MismatchError: "<what> mismatch across N ranks: ranks 0-2 hold '...'; rank 3
/// holds '...'" (each record shown by record_text), or, when some rank's record carries an
/// error, that error on every rank (judge_records). The hash reduction is nonblocking and waited for until `deadline`
/// (no limit by default): past it, this rank throws TimeoutError for step 'agreement' ("... waiting for all ranks at
/// the <what> agreement (step 'agreement', rank r of N)"), and `comm` must not be used for collectives again (see
/// deadline.hpp). Throws BackendError for MPI failures.
void require_identical(const Communicator& comm, std::string_view text, std::string_view what,
                       const Deadline& deadline = {});

/// Collective over `world`: the first two steps of ParallelContext's constructor (the
/// duplicate of `world`, then require_identical of `record` on it, both until `deadline`)
/// for a caller that is not building a context, such as a rank that hit an error before
/// it could (`record` = encode_error(...)): the ranks in the constructor then throw that
/// error, and so does this one. Returns when every rank passed the same settings record;
/// throws as judge_records (pgroups/layout/agreement_record.hpp) otherwise.
void agree(const Communicator& world, std::string_view record, std::string_view what, const Deadline& deadline = {});

/// Collective over `comm`: rank 0's `bytes` into every rank's (one MPI_Bcast; every rank
/// passes as many). ConfigError for more than INT_MAX bytes, BackendError naming `what`
/// when MPI fails.
void broadcast_from_rank0(MPI_Comm comm, std::span<std::byte> bytes, std::string_view what);

/// Ranks as ascending runs, for messages: {0, 1, 2, 5, 7, 8, 9} -> "0-2, 5, 7-9".
/// Precondition: `ranks` ascending. O(ranks).
[[nodiscard]] std::string rank_runs(std::span<const int> ranks);

/// 64-bit FNV-1a hash of `text` (settings_digest); exposed for tests.
[[nodiscard]] std::uint64_t text_hash(std::string_view text) noexcept;

}  // namespace pgroups::mpi
