#pragma once
/// \file
/// The configuration agreement over a bootstrap (pgroups/launch/bootstrap.hpp), as
/// mpi::agree is over MPI: every rank's record (pgroups/layout/agreement_record.hpp) must
/// be the same, and a rank that carries an error makes every rank raise it. The digests
/// are agreed on first (Bootstrap::all_gather_if_differing: on the env bootstrap by
/// counters, a few bytes a rank; elsewhere 8 bytes a rank), the records travel only where
/// the digests differ. Every rank of one
/// construction calls it once, the C++ and the Python front doors alike (a rank that
/// carries its error in here meets the others' agreement).

#include <chrono>
#include <string_view>

#include "pgroups/launch/bootstrap.hpp"

namespace pgroups {

/// Collective over `bootstrap`'s world, bounded by `timeout` (each of its one or two
/// collectives). Returns when every rank passed the same `record`; otherwise throws on
/// every rank what judge_records throws (the carried error, or the differing settings
/// named by rank).
void agree_over_bootstrap(Bootstrap& bootstrap, std::string_view record, std::chrono::milliseconds timeout,
                          std::string_view what);

}  // namespace pgroups
