#include "pgroups/common/printable.hpp"

#include <fmt/format.h>

namespace pgroups {
namespace {

// Appends the escaped form of `text`; `quote` (or '\0' for none) is escaped as well, and
// a backslash when the result is to be read as a literal.
void append_escaped(std::string& out, std::string_view text, char quote, bool escape_backslash) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == '\\' && escape_backslash) {
          out += "\\\\";
        } else if (quote != '\0' && c == quote) {
          out += '\\';
          out += c;
        } else if (byte < 0x20 || byte >= 0x7f) {
          // Raw bytes would garble a terminal, and a message must stay valid UTF-8 even
          // when the input is not.
          out += fmt::format("\\x{:02x}", byte);
        } else {
          out += c;
        }
    }
  }
}

}  // namespace

std::string printable_excerpt(std::string_view text, std::size_t max_length) {
  std::string out;
  append_escaped(out, text.substr(0, max_length), '\0', false);
  if (text.size() > max_length) out += "...";
  return out;
}

std::string quoted_excerpt(std::string_view text, char quote, std::size_t max_length) {
  std::string out(1, quote);
  append_escaped(out, text.substr(0, max_length), quote, true);
  out += quote;
  if (text.size() > max_length) out += "...";
  return out;
}

std::string rank_list(std::span<const int> ranks) {
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

}  // namespace pgroups
