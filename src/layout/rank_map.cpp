#include "pgroups/layout/rank_map.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pgroups/common/error.hpp"

namespace pgroups {

bool is_identity_map(std::span<const std::int64_t> map) noexcept {
  for (std::size_t r = 0; r < map.size(); ++r) {
    if (map[r] != static_cast<std::int64_t>(r)) return false;
  }
  return true;
}

std::string rank_list_excerpt(std::span<const std::int64_t> ranks, std::size_t limit) {
  if (ranks.size() <= limit) return fmt::format("[{}]", fmt::join(ranks, ", "));
  return fmt::format("[{}, ... {} more]", fmt::join(ranks.first(limit), ", "), ranks.size() - limit);
}

RankMap::RankMap(std::vector<std::int64_t> to_launcher, std::int64_t world_size) {
  if (to_launcher.empty() || is_identity_map(to_launcher)) {
    if (!to_launcher.empty() && static_cast<std::int64_t>(to_launcher.size()) != world_size) {
      throw ConfigError(
          fmt::format("rank map has {} entries, but the world has {} ranks: entry r is the launcher "
                      "rank that runs mesh rank r, one per rank{}",
                      to_launcher.size(), world_size,
                      static_cast<std::int64_t>(to_launcher.size()) < world_size
                          ? fmt::format(" (launcher rank {} is missing)", to_launcher.size())
                          : std::string()));
    }
    return;
  }
  const auto n = static_cast<std::int64_t>(to_launcher.size());
  std::vector<std::int64_t> inverse(static_cast<std::size_t>(n < world_size ? world_size : n), -1);
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t target = to_launcher[static_cast<std::size_t>(r)];
    if (target < 0 || target >= world_size) {
      throw ConfigError(
          fmt::format("rank map entry {} is {}, outside the world of {} ranks (valid: 0..{}): the map "
                      "must be a permutation of the launcher ranks",
                      r, target, world_size, world_size - 1));
    }
    auto& seen = inverse[static_cast<std::size_t>(target)];
    if (seen >= 0) {
      throw ConfigError(
          fmt::format("rank map entries {} and {} are both launcher rank {}: the map must be a "
                      "permutation of the launcher ranks, each once",
                      seen, r, target));
    }
    seen = r;
  }
  if (n != world_size) {
    std::int64_t missing = 0;
    while (missing < world_size && inverse[static_cast<std::size_t>(missing)] >= 0) ++missing;
    throw ConfigError(fmt::format(
        "rank map has {} entries, but the world has {} ranks: entry r is the launcher rank "
        "that runs mesh rank r, one per rank{}",
        n, world_size, missing < world_size ? fmt::format(" (launcher rank {} is missing)", missing) : std::string()));
  }
  inverse.resize(static_cast<std::size_t>(world_size));
  // FNV-1a over the entries' bytes: a digest, so that a partition key stays small.
  std::uint64_t hash = 14695981039346656037ULL;
  for (const std::int64_t value : to_launcher) {
    auto bits = static_cast<std::uint64_t>(value);
    for (int i = 0; i < 8; ++i) {
      hash ^= bits & 0xFFU;
      hash *= 1099511628211ULL;
      bits >>= 8;
    }
  }
  fingerprint_ = hash == 0 ? 1 : hash;
  to_launcher_ = std::move(to_launcher);
  to_mesh_ = std::move(inverse);
}

}  // namespace pgroups
