#include "value_tree.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "pgroups/error.hpp"

namespace pgroups::detail {

std::string located(std::string_view source, SourcePosition position, std::string_view message) {
  if (position.line == 0) return fmt::format("{}: {}", source, message);
  return fmt::format("{}:{}:{}: {}", source, position.line, position.column, message);
}

void throw_parse_error(std::string_view source, SourcePosition position, std::string_view message) {
  throw ParseError(located(source, position, message));
}

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

const ConfigEntry* ConfigValue::find(std::string_view key) const {
  for (const ConfigEntry& entry : entries) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

void ValueTreeBuilder::key(std::string_view key, SourcePosition position) {
  pending_key_.assign(key);
  pending_key_position_ = position;
}

void ValueTreeBuilder::scalar(ConfigValue value) {
  if (ConfigValue* node = place_value(value.position)) *node = std::move(value);
}

void ValueTreeBuilder::begin(ValueKind container, SourcePosition position) {
  if (open_.size() >= kMaxNesting) {
    throw_parse_error(source_, position, fmt::format("nesting is deeper than {} levels", kMaxNesting));
  }
  std::string path;
  if (!open_.empty() && open_.back().keeps_entries) {
    path = open_.back().path.empty() ? pending_key_ : open_.back().path + "." + pending_key_;
  }
  ConfigValue* node = place_value(position);
  if (node) node->kind = container;
  // Depth 1 is the top level, 2 `parallel`, 3 `parallel.tensor`: nothing deeper can hold
  // a setting, so deeper tables are kept as a kind alone. An array directly under a kept
  // table (`mesh.groups`) keeps its elements.
  const bool keeps_entries = node != nullptr && (container == ValueKind::table || container == ValueKind::array) &&
                             open_.size() < 3;
  open_.push_back(Frame{node, keeps_entries, keeps_entries ? std::move(path) : std::string()});
}

void ValueTreeBuilder::end() {
  if (open_.empty()) throw std::logic_error("ValueTreeBuilder::end without an open container");
  open_.pop_back();
}

ConfigValue ValueTreeBuilder::finish() {
  if (!has_root_ || !open_.empty()) throw std::logic_error("ValueTreeBuilder::finish on an incomplete document");
  return std::move(root_);
}

ConfigValue* ValueTreeBuilder::place_value(SourcePosition position) {
  if (open_.empty()) {
    if (has_root_) throw std::logic_error("ValueTreeBuilder: a second top-level value");
    has_root_ = true;
    root_.position = position;
    return &root_;
  }
  const Frame& parent = open_.back();
  if (!parent.keeps_entries) return nullptr;
  // The top level of a training config holds many unrelated settings; only two matter.
  if (open_.size() == 1 && pending_key_ != "parallel" && pending_key_ != "mesh") return nullptr;
  std::vector<ConfigEntry>& entries = parent.node->entries;
  // A kept container counts all its entries, kept or not, so that a reader can tell
  // that some were dropped.
  ++parent.node->integer;
  if (parent.node->kind == ValueKind::array) {
    if (entries.size() >= kMaxKeptEntries) return nullptr;
    entries.push_back(ConfigEntry{std::string(), position, ConfigValue{}});
    entries.back().value.position = position;
    return &entries.back().value;
  }
  for (const ConfigEntry& entry : entries) {
    if (entry.key == pending_key_) {
      const std::string where = parent.path.empty() ? std::string() : " in " + parent.path;
      throw_parse_error(source_, pending_key_position_,
                        fmt::format("duplicate key {}{} (first at line {}, column {})", quoted_excerpt(pending_key_),
                                    where, entry.key_position.line, entry.key_position.column));
    }
  }
  // Past this many distinct keys a table must hold unknown ones among those kept (a
  // table has at most five known keys), so it is rejected all the same; dropping the
  // rest bounds memory against a hostile file of millions of keys.
  if (entries.size() >= kMaxKeptEntries) return nullptr;
  entries.push_back(ConfigEntry{pending_key_, pending_key_position_, ConfigValue{}});
  ConfigValue& value = entries.back().value;
  value.position = position;
  return &value;
}

}  // namespace pgroups::detail
