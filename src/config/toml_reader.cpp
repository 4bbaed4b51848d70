#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "format_readers.hpp"
#include "pgroups/common/decimal_integer.hpp"

namespace pgroups::detail {
namespace {

// A linear pass over TOML's lexical structure that measures how deep the document
// nests, counting tables, arrays and inline tables opened by brackets, table headers and
// dotted keys alike, in the builder's terms (the top level is depth 1). toml++ bounds
// nested values (arrays, inline tables: 256 levels) but not dotted keys or table
// headers: `a.a.a...a = 1` or `[a.a...a]` with 100,000 parts crash toml++ 3.3 with a
// stack overflow. So nothing reaches toml++ before this scan has bounded the depth,
// which also makes the limit the same in every format. The scan only needs to be right
// for well-formed TOML; on malformed text it must merely terminate, and toml++ then
// reports the syntax error.
class TomlNestingScan {
 public:
  TomlNestingScan(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  void run() {
    while (at_ < text_.size()) {
      const char c = text_[at_];
      switch (c) {
        case '#': skip_until_newline(); continue;
        case '"':
        case '\'': skip_string(c); continue;
        case '\n': new_line(); break;
        case '=':
          count_value();
          if (!in_array()) {
            key_dots_ = dots_;
            dots_ = 0;
            after_equals_ = true;
          }
          break;
        case '.':
          if (in_header_) {
            ++header_dots_;
            count_value();
            check(header_level());
          } else if (!after_equals_ && !in_array()) {
            ++dots_;
            count_value();
            check(base_ + dots_);
          }
          break;
        case ',':
          count_value();
          if (!in_array()) {
            dots_ = key_dots_ = 0;
            after_equals_ = false;
          }
          break;
        case '[':
          if (open_.empty() && !after_equals_ && !in_header_) {
            begin_header();
            continue;
          }
          open(c);
          break;
        case '{': open(c); break;
        case ']':
          if (in_header_) {
            end_header();
            continue;
          }
          close();
          break;
        case '}': close(); break;
        default: break;
      }
      ++at_;
    }
  }

 private:
  struct Saved {
    char bracket;
    std::size_t base;
    std::size_t key_dots;
    std::size_t dots;
    bool after_equals;
  };

  bool in_array() const { return !open_.empty() && open_.back().bracket == '['; }
  std::size_t header_level() const { return 2 + header_dots_ + (header_is_array_ ? 1 : 0); }

  void check(std::size_t level) const {
    if (level > kMaxNesting) {
      throw_parse_error(source_, position(), fmt::format("nesting is deeper than {} levels", kMaxNesting));
    }
  }

  // toml++ builds the whole document, a node of about a hundred bytes for as little as
  // two bytes of text ("[]," or "a=1\n"); bounding the nodes before it runs bounds its
  // memory whatever the text.
  void count_value() {
    if (++values_ > kMaxTomlValues) {
      throw_parse_error(source_, position(),
                        fmt::format("more than {} values, tables or keys: a TOML configuration is read whole, so it "
                                    "may hold at most {} (real ones hold tens)",
                                    kMaxTomlValues, kMaxTomlValues));
    }
  }

  void open(char bracket) {
    count_value();
    // An array's elements sit one level below it; a table's value one level below the
    // last part of its (dotted) key.
    const std::size_t level = in_array() ? base_ + 1 : base_ + key_dots_ + 1;
    check(level);
    open_.push_back(Saved{bracket, base_, key_dots_, dots_, after_equals_});
    base_ = level;
    key_dots_ = dots_ = 0;
    after_equals_ = false;
  }

  void close() {
    if (open_.empty()) return;  // unbalanced: toml++ will say so
    const Saved saved = open_.back();
    open_.pop_back();
    base_ = saved.base;
    key_dots_ = saved.key_dots;
    dots_ = saved.dots;
    after_equals_ = saved.after_equals;
  }

  void begin_header() {
    count_value();
    header_is_array_ = at_ + 1 < text_.size() && text_[at_ + 1] == '[';
    at_ += header_is_array_ ? 2 : 1;
    in_header_ = true;
    header_dots_ = 0;
    check(header_level());
  }

  void end_header() {
    in_header_ = false;
    at_ += header_is_array_ && at_ + 1 < text_.size() && text_[at_ + 1] == ']' ? 2 : 1;
    table_level_ = base_ = header_level();
    dots_ = key_dots_ = 0;
    after_equals_ = false;
  }

  void new_line() {
    ++line_;
    line_start_ = at_ + 1;
    // Only arrays may span lines; everywhere else a line ends the key/value pair.
    if (open_.empty()) {
      base_ = table_level_;
      dots_ = key_dots_ = 0;
      after_equals_ = false;
      in_header_ = false;
    }
  }

  void skip_until_newline() {
    const std::size_t end = text_.find('\n', at_);
    at_ = end == std::string_view::npos ? text_.size() : end;
  }

  // Leaves at_ just past the closing quote, or on the newline or end that cut the string
  // short.
  void skip_string(char quote) {
    const bool multi_line = text_.substr(at_, 3) == std::string(3, quote);
    const bool escapes = quote == '"';
    at_ += multi_line ? 3 : 1;
    while (at_ < text_.size()) {
      const char c = text_[at_];
      if (c == '\n') {
        if (!multi_line) return;
        new_line_in_string();
      } else if (c == '\\' && escapes) {
        ++at_;  // the escaped character, unless it is a line break, which is counted
        if (at_ >= text_.size() || text_[at_] == '\n') continue;
      } else if (c == quote) {
        if (!multi_line) {
          ++at_;
          return;
        }
        if (text_.substr(at_, 3) == std::string(3, quote)) {
          at_ += 3;
          // Up to two more quotes belong to the content: """a""""" is `a""`.
          for (int extra = 0; extra < 2 && at_ < text_.size() && text_[at_] == quote; ++extra) ++at_;
          return;
        }
      }
      ++at_;
    }
  }

  void new_line_in_string() {
    ++line_;
    line_start_ = at_ + 1;
  }

  SourcePosition position() const { return {line_, at_ - line_start_ + 1}; }

  std::string_view text_;
  std::string_view source_;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
  std::vector<Saved> open_;
  std::size_t table_level_ = 1;  // the level of the table the current header opened
  std::size_t base_ = 1;         // the level of the innermost open table or array
  std::size_t dots_ = 0;         // dots in the key being read
  std::size_t key_dots_ = 0;     // dots in the key whose value is being read
  bool after_equals_ = false;
  bool in_header_ = false;
  bool header_is_array_ = false;
  std::size_t header_dots_ = 0;
  std::size_t values_ = 0;
};

SourcePosition position_of(const toml::source_region& region) {
  return {static_cast<std::size_t>(region.begin.line), static_cast<std::size_t>(region.begin.column)};
}

// toml++ keeps only the double; show it as TOML would write it, with a fraction.
std::string float_text(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
  return text;
}

// toml++ keeps an integer's value, not how it was written; the settings' integers are
// looked up in the text so that they follow the one rule of every format and of the
// command line: decimal only (TOML's 0x, 0o and 0b forms are refused, with the words the
// other readers use). Lookups go forward through the text, so they cost O(size) in all
// for the few integers of `parallel` (and once more for those of `mesh` above it).
class IntegerSpellings {
 public:
  IntegerSpellings(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  void check(const toml::node& node) {
    const toml::source_position where = node.source().begin;
    const std::string_view spelling = at(where);
    const IntegerReading reading = read_decimal_integer(spelling, kTomlIntegers);
    if (reading.status == IntegerStatus::not_decimal) {
      throw_parse_error(source_, position_of(node.source()), integer_problem(reading, spelling, ""));
    }
  }

 private:
  static constexpr IntegerSyntax kTomlIntegers{.plus_sign = true, .digit_separators = true, .repeated_zeros = false};

  std::string_view at(const toml::source_position& where) {
    if (where.line < line_) line_ = 1, line_start_ = 0;
    while (line_ < where.line) {
      const std::size_t newline = text_.find('\n', line_start_);
      if (newline == std::string_view::npos) return {};
      line_start_ = newline + 1;
      ++line_;
    }
    // toml++ counts columns in code points.
    std::size_t at = line_start_;
    for (std::size_t column = 1; column < where.column && at < text_.size(); ++column) {
      ++at;
      while (at < text_.size() && (static_cast<unsigned char>(text_[at]) & 0xC0) == 0x80) ++at;
    }
    const std::size_t end = std::min(text_.find_first_of(" \t\r\n,]}#", at), text_.size());
    return text_.substr(at, end - at);
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
};

// toml++ orders keys by name; source order makes the first error the first in the file.
std::vector<std::pair<const toml::key*, const toml::node*>> in_source_order(const toml::table& table) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  entries.reserve(table.size());
  for (const auto& [key, value] : table) entries.emplace_back(&key, &value);
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    const toml::source_position& pa = a.first->source().begin;
    const toml::source_position& pb = b.first->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  return entries;
}

void emit(const toml::node& node, ValueTreeBuilder& builder, IntegerSpellings& spellings);

void emit_table(const toml::table& table, SourcePosition position, ValueTreeBuilder& builder,
                IntegerSpellings& spellings) {
  builder.begin(ValueKind::table, position);
  for (const auto& [key, value] : in_source_order(table)) {
    builder.key(key->str(), position_of(key->source()));
    emit(*value, builder, spellings);
  }
  builder.end();
}

void emit(const toml::node& node, ValueTreeBuilder& builder, IntegerSpellings& spellings) {
  const SourcePosition position = position_of(node.source());
  if (const toml::table* table = node.as_table()) {
    emit_table(*table, position, builder, spellings);
    return;
  }
  if (const toml::array* array = node.as_array()) {
    builder.begin(ValueKind::array, position);
    // The nesting scan has bounded the depth; the builder drops what no setting uses.
    for (const toml::node& element : *array) emit(element, builder, spellings);
    builder.end();
    return;
  }
  ConfigValue value;
  value.position = position;
  if (const auto* integer = node.as_integer()) {
    spellings.check(node);
    value.kind = ValueKind::integer;
    value.integer = integer->get();
  } else if (const auto* floating = node.as_floating_point()) {
    value.kind = ValueKind::floating;
    value.text = float_text(floating->get());
  } else if (const auto* boolean = node.as_boolean()) {
    value.kind = ValueKind::boolean;
    value.boolean = boolean->get();
  } else if (const auto* string = node.as_string()) {
    value.kind = ValueKind::string;
    value.text = string->get();
  } else {
    value.kind = ValueKind::date_time;
  }
  builder.scalar(std::move(value));
}

}  // namespace

ConfigValue read_toml_tree(std::string_view text, std::string_view source) {
  TomlNestingScan(text, source).run();
  toml::table document;
  try {
    document = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    std::string message = printable_excerpt(error.description());
    if (!message.empty()) message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
    throw_parse_error(source, position_of(error.source()), message);
  }
  // Only `parallel` and `mesh` are read whole. Every other top-level key is refused
  // (a TOML file holds pgroups' settings alone), so it goes to the builder as a bare
  // name, its value never looked at; in source order, so that the first one is named.
  ValueTreeBuilder builder(source, OtherTopLevelKeys::refused);
  builder.begin(ValueKind::table, SourcePosition{1, 1});
  IntegerSpellings spellings(text, source);
  for (const auto& [key, value] : in_source_order(document)) {
    builder.key(key->str(), position_of(key->source()));
    if (key->str() == kParallelKey || key->str() == kMeshKey || key->str() == kClusterKey) {
      emit(*value, builder, spellings);
    } else {
      ConfigValue bare;
      bare.position = position_of(value->source());
      builder.scalar(std::move(bare));
    }
  }
  builder.end();
  return builder.finish();
}

}  // namespace pgroups::detail
