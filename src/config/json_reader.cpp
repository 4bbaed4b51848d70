#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "format_readers.hpp"
#include "pgroups/common/error.hpp"

namespace pgroups::detail {
namespace {

// nlohmann's SAX events carry no position. Its lexer pulls characters one at a time
// through this iterator, which records how far it has read; since the lexer reads at
// most one character past a token, the token an event stands for starts at the first
// non-separator character after the previous event's end.
class ReadTracker {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  ReadTracker() = default;
  ReadTracker(const char* at, const char** read_up_to) : at_(at), read_up_to_(read_up_to) {}

  reference operator*() const { return *at_; }
  ReadTracker& operator++() {
    ++at_;
    if (read_up_to_ != nullptr) *read_up_to_ = at_;
    return *this;
  }
  ReadTracker operator++(int) {
    ReadTracker before = *this;
    ++*this;
    return before;
  }
  friend bool operator==(const ReadTracker& a, const ReadTracker& b) { return a.at_ == b.at_; }

 private:
  const char* at_ = nullptr;
  const char** read_up_to_ = nullptr;
};

// Line and column of byte offsets asked for in increasing order, in linear time overall.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}

  SourcePosition at(std::size_t offset) {
    offset = std::min(offset, text_.size());
    if (offset < scanned_) {  // not expected, but stay correct
      scanned_ = line_start_ = 0;
      line_ = 1;
    }
    for (; scanned_ < offset; ++scanned_) {
      if (text_[scanned_] == '\n') {
        ++line_;
        line_start_ = scanned_ + 1;
      }
    }
    return {line_, offset - line_start_ + 1};
  }

 private:
  std::string_view text_;
  std::size_t scanned_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
};

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class JsonTreeHandler final : public nlohmann::json_sax<nlohmann::json> {
 public:
  JsonTreeHandler(std::string_view text, std::string_view source, const char* const* read_up_to)
      : text_(text),
        source_(source),
        read_up_to_(read_up_to),
        cursor_(text),
        builder_(source, OtherTopLevelKeys::refused) {
    // nlohmann skips a UTF-8 byte order mark silently.
    if (text.starts_with("\xEF\xBB\xBF")) previous_end_ = 3;
  }

  bool null() override { return scalar(ConfigValue{}); }

  bool boolean(bool value) override {
    ConfigValue v;
    v.kind = ValueKind::boolean;
    v.boolean = value;
    return scalar(std::move(v));
  }

  bool number_integer(number_integer_t value) override {
    ConfigValue v;
    v.kind = ValueKind::integer;
    v.integer = value;
    return scalar(std::move(v));
  }

  // nlohmann reports every non-negative integer as unsigned.
  bool number_unsigned(number_unsigned_t value) override {
    ConfigValue v;
    if (value <= static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max())) {
      v.kind = ValueKind::integer;
      v.integer = static_cast<std::int64_t>(value);
    } else {
      v.kind = ValueKind::big_integer;
      v.text = fmt::format("{}", value);
    }
    return scalar(std::move(v));
  }

  // An integer beyond 64 bits arrives here as a float; its spelling tells them apart.
  bool number_float(number_float_t, const string_t& spelling) override {
    ConfigValue v;
    v.kind = spelling.find_first_of(".eE") == std::string::npos ? ValueKind::big_integer : ValueKind::floating;
    v.text = spelling;
    return scalar(std::move(v));
  }

  bool string(string_t& value) override {
    ConfigValue v;
    v.kind = ValueKind::string;
    v.text = std::move(value);
    return scalar(std::move(v));
  }

  bool binary(binary_t&) override { return scalar(ConfigValue{}); }  // never produced by JSON text

  bool start_object(std::size_t) override {
    builder_.begin(ValueKind::table, next_token());
    return true;
  }

  bool key(string_t& name) override {
    builder_.key(name, next_token());
    return true;
  }

  bool end_object() override {
    next_token();
    builder_.end();
    return true;
  }

  bool start_array(std::size_t) override {
    builder_.begin(ValueKind::array, next_token());
    return true;
  }

  bool end_array() override {
    next_token();
    builder_.end();
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& error) override {
    // nlohmann counts the offending character, or the end of input, as read.
    const SourcePosition where = cursor_.at(position > 0 ? position - 1 : 0);
    // Keep nlohmann's explanation, without its exception id and its own position.
    std::string_view detail = error.what();
    if (const auto column = detail.find(", column "); column != std::string_view::npos) {
      if (const auto colon = detail.find(": ", column); colon != std::string_view::npos)
        detail.remove_prefix(colon + 2);
    } else if (const auto bracket = detail.find("] "); bracket != std::string_view::npos) {
      detail.remove_prefix(bracket + 2);
    }
    throw_parse_error(source_, where, printable_excerpt(detail));
  }

  ConfigValue finish() { return builder_.finish(); }

 private:
  bool scalar(ConfigValue value) {
    value.position = next_token();
    builder_.scalar(std::move(value));
    return true;
  }

  // The position of the token that the current event stands for.
  SourcePosition next_token() {
    std::size_t at = previous_end_;
    const auto skip_space = [&] {
      while (at < text_.size() && is_json_space(text_[at])) ++at;
    };
    skip_space();
    if (at < text_.size() && (text_[at] == ':' || text_[at] == ',')) {
      ++at;
      skip_space();
    }
    previous_end_ = static_cast<std::size_t>(*read_up_to_ - text_.data());
    return cursor_.at(at);
  }

  std::string_view text_;
  std::string_view source_;
  const char* const* read_up_to_;
  std::size_t previous_end_ = 0;
  LineCursor cursor_;
  ValueTreeBuilder builder_;
};

}  // namespace

ConfigValue read_json_tree(std::string_view text, std::string_view source) {
  // nlohmann takes a NUL for the end of the input and would ignore whatever follows it;
  // JSON text holds none, not even inside strings.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    throw_parse_error(source, LineCursor(text).at(nul), "unexpected NUL byte");
  }
  const char* read_up_to = text.data();
  JsonTreeHandler handler(text, source, &read_up_to);
  // The SAX parser is iterative, so depth costs it no stack; the builder stops at
  // kMaxNesting all the same, which also bounds the handler's work.
  const bool parsed =
      nlohmann::json::sax_parse(ReadTracker(text.data(), &read_up_to), ReadTracker(text.data() + text.size(), nullptr),
                                &handler, nlohmann::json::input_format_t::json, true, false);
  if (!parsed) throw_parse_error(source, {}, "not a JSON document");
  return handler.finish();
}

}  // namespace pgroups::detail
