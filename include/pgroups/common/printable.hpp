#pragma once
/// \file
/// Text from the user made fit for an error message: the one escaping and cutting rule of
/// every message pgroups prints, from the config readers and the command line alike, and
/// for tools built on pgroups that quote user text the same way (target pgroups::common).

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace pgroups {

/// `text` made fit for an error message: control and non-ASCII bytes are escaped (\n,
/// \x00, \xff, ...) and anything past `max_length` bytes is cut and replaced by "...".
/// O(min(size, max_length)).
[[nodiscard]] std::string printable_excerpt(std::string_view text, std::size_t max_length = 200);

/// printable_excerpt() between `quote`s, with `quote` and backslash escaped too: 'a\'b',
/// or 'abc'... when cut.
[[nodiscard]] std::string quoted_excerpt(std::string_view text, char quote = '\'', std::size_t max_length = 40);

/// The longest line the CLI prints for one error: a backstop behind the per-value cut
/// of quoted_excerpt(), for messages that quote text of their own (CLI11's).
inline constexpr std::size_t kMaxErrorLineBytes = 1024;

/// Ranks as ascending runs, for messages: {0, 1, 2, 5, 7, 8, 9} -> "0-2, 5, 7-9".
/// Precondition: `ranks` ascending. O(ranks).
[[nodiscard]] std::string rank_list(std::span<const int> ranks);

}  // namespace pgroups
