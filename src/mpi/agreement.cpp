#include "pgroups/mpi/agreement.hpp"

#include <fmt/format.h>

#include <climits>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/layout/agreement_record.hpp"
#include "pgroups/mpi/check.hpp"

namespace pgroups::mpi {

std::string rank_runs(std::span<const int> ranks) { return rank_list(ranks); }

void broadcast_from_rank0(MPI_Comm comm, std::span<std::byte> bytes, std::string_view what) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    throw ConfigError(fmt::format("cannot broadcast {} bytes with one MPI_Bcast (max {})", bytes.size(), INT_MAX));
  }
  check(MPI_Bcast(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, comm),
        fmt::format("MPI_Bcast of {}", what));
}

namespace {

// Only on the failure path: every rank gathers every text, so that all ranks build the
// same message and throw the same error.
[[noreturn]] void throw_mismatch(const Communicator& comm, std::string_view text, std::string_view what) {
  const int size = comm.size();
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm.get()), "MPI_Allgather");
  std::vector<int> offsets(static_cast<std::size_t>(size));
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  check(MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm.get()),
        "MPI_Allgatherv");

  std::vector<std::string> records(static_cast<std::size_t>(size));
  for (std::size_t r = 0; r < records.size(); ++r) {
    records[r] = all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r]));
  }
  judge_records(records, what);
  // Different digests of equal records cannot happen; fail loudly rather than go on.
  throw MismatchError(fmt::format("{} mismatch across {} ranks: the digests differ", what, size));
}

}  // namespace

std::uint64_t text_hash(std::string_view text) noexcept { return settings_digest(text); }

void require_identical(const Communicator& comm, std::string_view text, std::string_view what,
                       const Deadline& deadline) {
  // 63 bits, so that negating never overflows: the minimum of {h, -h} over all ranks
  // gives the smallest and (negated) the largest hash in a single reduction.
  const auto hash = static_cast<std::int64_t>(text_hash(text) >> 1);
  const std::array<std::int64_t, 2> local = {hash, -hash};
  // Every rank waits here for all the others, so a rank that never arrives is noticed
  // here: the reduction is waited for only until the deadline.
  const std::string description = fmt::format("the {} agreement", what);
  const std::vector<std::int64_t> reduced = min_until(comm, local, deadline, {"agreement", description});
  if (reduced[0] == -reduced[1]) return;
  throw_mismatch(comm, text, what);
}

void agree(const Communicator& world, std::string_view record, std::string_view what, const Deadline& deadline) {
  // The same first two steps as ParallelContext's constructor, so that a rank calling
  // this meets the others there.
  const Communicator control = dup_until(world, deadline, {"duplicate", "the duplicate of the world communicator"});
  require_identical(control, record, what, deadline);
  // Every rank carries the same error: each raises it.
  if (is_error_record(record)) {
    const std::vector<std::string> records(static_cast<std::size_t>(world.size()), std::string(record));
    judge_records(records, what);
  }
}

}  // namespace pgroups::mpi
