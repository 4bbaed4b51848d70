#pragma once
// Spelling suggestions for error messages ("did you mean pipeline?"). Internal to pgroups.

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace pgroups::detail {

/// The candidate closest to `word` by edit distance, when it is close enough to be a
/// plausible typo (at most a third of the word's length, at least one edit allowed);
/// case differences count as half an edit so that "2D" suggests "2d".
[[nodiscard]] std::optional<std::string_view> closest_match(std::string_view word,
                                                            std::span<const std::string_view> candidates);

/// " (did you mean X?)" or "" when nothing is close.
[[nodiscard]] std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace pgroups::detail
