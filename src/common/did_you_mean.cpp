#include "did_you_mean.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace pgroups::detail {
namespace {
// Levenshtein distance in half-edits: a substitution that only changes case costs 1,
// any other edit 2.
std::size_t half_edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = 2 * j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = 2 * i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitution = 2;
      if (a[i - 1] == b[j - 1]) {
        substitution = 0;
      } else if (std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                 std::tolower(static_cast<unsigned char>(b[j - 1]))) {
        substitution = 1;
      }
      cur[j] = std::min({prev[j] + 2, cur[j - 1] + 2, prev[j - 1] + substitution});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::optional<std::string_view> closest_match(std::string_view word, std::span<const std::string_view> candidates) {
  if (word.size() > 64) return std::nullopt;  // no typo is that long; keeps the cost bounded
  std::optional<std::string_view> best;
  std::size_t best_distance = 0;
  for (std::string_view candidate : candidates) {
    const std::size_t distance = half_edit_distance(word, candidate);
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  // Short words are all near each other ("4d" is one edit from "1d"): only a change of
  // case is a plausible typo there.
  const std::size_t length = std::max(word.size(), best ? best->size() : 0);
  const std::size_t allowed = length <= 3 ? 1 : 2 * std::max<std::size_t>(1, length / 3);
  if (!best || best_distance == 0 || best_distance > allowed) return std::nullopt;
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  const auto match = closest_match(word, candidates);
  if (!match) return {};
  return " (did you mean " + std::string(*match) + "?)";
}

}  // namespace pgroups::detail
