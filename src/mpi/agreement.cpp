#include "pgroups/mpi/agreement.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pgroups/error.hpp"
#include "pgroups/mpi/error.hpp"

namespace pgroups::mpi {

std::string rank_runs(std::span<const int> ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ", ";
    text += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return text;
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
  check(MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                       comm.get()),
        "MPI_Allgatherv");

  // Texts in order of the first rank holding them.
  std::vector<std::string> texts;
  std::map<std::string, std::vector<int>> holders;
  for (int r = 0; r < size; ++r) {
    std::string held = all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                                  static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]));
    auto [it, inserted] = holders.try_emplace(held);
    if (inserted) texts.push_back(held);
    it->second.push_back(r);
  }
  constexpr std::size_t kShown = 8;
  std::string detail;
  for (std::size_t i = 0; i < texts.size() && i < kShown; ++i) {
    const std::vector<int>& ranks = holders[texts[i]];
    detail += fmt::format("{}{} {} {} '{}'", i == 0 ? "" : "; ", ranks.size() == 1 ? "rank" : "ranks",
                          rank_runs(ranks), ranks.size() == 1 ? "holds" : "hold", texts[i]);
  }
  if (texts.size() > kShown) detail += fmt::format("; and {} more variants", texts.size() - kShown);
  throw MismatchError(fmt::format("{} mismatch across {} ranks: {}", what, size, detail));
}

}  // namespace

std::uint64_t text_hash(std::string_view text) noexcept {
  std::uint64_t hash = 14695981039346656037ULL;
  for (char ch : text) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= 1099511628211ULL;
  }
  return hash;
}

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

}  // namespace pgroups::mpi
