#include "python_literal_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "../common/decimal_integer.hpp"
#include "../common/did_you_mean.hpp"
#include "format_readers.hpp"

namespace pgroups::detail {
namespace {

// Python's decimal integers: `_` between digits, and "00" is 0.
constexpr IntegerSyntax kPythonIntegers{.plus_sign = false, .digit_separators = true, .repeated_zeros = true};

constexpr std::string_view kNeverExecuted = "a Python config is read as literals, never executed";

// Python's keywords less True, False and None, which are literals here.
constexpr auto kKeywords = std::to_array<std::string_view>(
    {"and",      "as",     "assert",  "async", "await", "break",  "class", "continue", "def",  "del",  "elif",
     "else",     "except", "finally", "for",   "from",  "global", "if",    "import",   "in",   "is",   "lambda",
     "nonlocal", "not",    "or",      "pass",  "raise", "return", "try",   "while",    "with", "yield"});

constexpr auto kLiteralNames = std::to_array<std::string_view>({"True", "False", "None"});

// Longest first, so that the first match is the longest one.
constexpr auto kOperators = std::to_array<std::string_view>(
    {"**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=",
     "-=",  "*=",  "/=",  "%=",  "@=",  "&=", "|=", "^=", "+",  "-",  "*",  "/",  "%",  "@",  "&",  "|",
     "^",   "~",   "<",   ">",   "=",   ":",  ".",  ",",  ";",  "(",  ")",  "[",  "]",  "{",  "}",  "!"});

bool is_keyword(std::string_view name) {
  return std::find(kKeywords.begin(), kKeywords.end(), name) != kKeywords.end();
}

bool is_identifier_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
// Python ends a line at \n, \r\n and a lone \r alike.
bool is_line_break(char c) { return c == '\n' || c == '\r'; }
bool is_identifier_char(char c) { return is_identifier_start(c) || is_digit(c); }

void append_utf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

// The offset of the first byte that is not part of well-formed UTF-8 (no overlong
// forms, no surrogates, nothing past U+10FFFF), or npos.
std::size_t first_invalid_utf8(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const auto lead = static_cast<unsigned char>(text[at]);
    if (lead < 0x80) {
      ++at;
      continue;
    }
    std::size_t length = 0;
    unsigned char low = 0x80;  // bounds of the second byte, which rule out the bad forms
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      return at;
    }
    if (at + length > text.size()) return at;
    const auto second = static_cast<unsigned char>(text[at + 1]);
    if (second < low || second > high) return at;
    for (std::size_t i = 2; i < length; ++i) {
      if ((static_cast<unsigned char>(text[at + i]) & 0xC0) != 0x80) return at;
    }
    at += length;
  }
  return std::string_view::npos;
}

enum class TokenKind : std::uint8_t { name, integer, floating, string, op, newline, end };

struct Token {
  TokenKind kind = TokenKind::end;
  // A name or operator as written; an integer's digits without `_`; a float's spelling;
  // a string's decoded value.
  std::string text;
  SourcePosition position;
};

// What a message calls a token: "name 'os'", "'+'", "end of line".
std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::name: return fmt::format("name {}", quoted_excerpt(token.text));
    case TokenKind::integer: return fmt::format("integer {}", printable_excerpt(token.text, 40));
    case TokenKind::floating: return fmt::format("float {}", printable_excerpt(token.text, 40));
    case TokenKind::string: return fmt::format("string {}", quoted_excerpt(token.text));
    case TokenKind::op: return quoted_excerpt(token.text);
    case TokenKind::newline: return "end of line";
    case TokenKind::end: return "end of file";
  }
  return "token";
}

class Tokenizer {
 public:
  Tokenizer(std::string_view text, std::string_view source) : text_(text), source_(source) {
    if (text_.starts_with("\xEF\xBB\xBF")) at_ = line_start_ = 3;
    // Python refuses NUL anywhere in a source file; one check here spares every branch.
    if (const auto nul = text_.find('\0'); nul != std::string_view::npos) {
      fail_at(nul, "unexpected NUL byte");
    }
    // Python reads source files as UTF-8 and refuses anything else.
    if (const auto bad = first_invalid_utf8(text_); bad != std::string_view::npos) {
      fail_at(bad, fmt::format("invalid UTF-8 byte 0x{:02x}", static_cast<unsigned char>(text_[bad])));
    }
  }

  Token next() {
    for (;;) {
      if (at_line_start_ && depth_ == 0) {
        const std::size_t indent_start = at_;
        skip_blanks();
        if (at_ >= text_.size()) return make(TokenKind::end, "", position());
        const char c = text_[at_];
        if (c == '#') skip_comment();
        if (at_ < text_.size() && is_line_break(text_[at_])) {  // a blank or comment-only line
          consume_newline();
          continue;
        }
        if (at_ >= text_.size()) return make(TokenKind::end, "", position());
        at_line_start_ = false;
        if (at_ > indent_start) fail("unexpected indentation");
      }
      skip_blanks();
      if (at_ >= text_.size()) return make(TokenKind::end, "", position());
      const char c = text_[at_];
      if (c == '#') {
        skip_comment();
        continue;
      }
      if (is_line_break(c)) {
        const SourcePosition where = position();
        consume_newline();
        if (depth_ > 0) continue;
        at_line_start_ = true;
        return make(TokenKind::newline, "", where);
      }
      if (c == '\\') {
        // An explicit line join, allowed anywhere outside strings.
        const std::size_t after = at_ + 1;
        if (after < text_.size() && is_line_break(text_[after])) {
          at_ = after;
          consume_newline();
          continue;
        }
        fail("unexpected character '\\\\' (a backslash only joins lines)");
      }
      if (is_identifier_start(c)) return name();
      if (is_digit(c) || (c == '.' && at_ + 1 < text_.size() && is_digit(text_[at_ + 1]))) return number();
      if (c == '\'' || c == '"') return string();
      return op();
    }
  }

 private:
  Token make(TokenKind kind, std::string text, SourcePosition where) const {
    return Token{kind, std::move(text), where};
  }

  Token name() {
    const SourcePosition where = position();
    const std::size_t start = at_;
    while (at_ < text_.size() && is_identifier_char(text_[at_])) ++at_;
    std::string word(text_.substr(start, at_ - start));
    if (at_ < text_.size() && (text_[at_] == '\'' || text_[at_] == '"') && word.size() <= 2 &&
        word.find_first_not_of("rRbBuUfF") == std::string::npos) {
      fail_at(start, fmt::format("string prefix {} is not allowed, only plain '...' and \"...\" strings ({})",
                                 quoted_excerpt(word), kNeverExecuted));
    }
    return make(TokenKind::name, std::move(word), where);
  }

  Token number() {
    const SourcePosition where = position();
    const std::size_t start = at_;
    if (text_[at_] == '0' && at_ + 1 < text_.size() &&
        std::string_view("xXoObB").find(text_[at_ + 1]) != std::string_view::npos) {
      while (at_ < text_.size() && is_identifier_char(text_[at_])) ++at_;
      const std::string_view spelling = text_.substr(start, at_ - start);
      fail_at(start, integer_problem(read_decimal_integer(spelling, kPythonIntegers), spelling, ""));
    }
    std::string digits = read_digits();
    bool is_float = false;
    if (at_ < text_.size() && text_[at_] == '.') {
      is_float = true;
      ++at_;
      read_digits();
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
      std::size_t exponent = at_ + 1;
      if (exponent < text_.size() && (text_[exponent] == '+' || text_[exponent] == '-')) ++exponent;
      if (exponent < text_.size() && is_digit(text_[exponent])) {
        is_float = true;
        at_ = exponent;
        read_digits();
      }
    }
    if (at_ < text_.size() && is_identifier_char(text_[at_])) {
      while (at_ < text_.size() && is_identifier_char(text_[at_])) ++at_;
      fail_at(start, fmt::format("invalid number {}", quoted_excerpt(text_.substr(start, at_ - start))));
    }
    if (is_float) return make(TokenKind::floating, std::string(text_.substr(start, at_ - start)), where);
    const std::string_view spelling = text_.substr(start, at_ - start);
    if (const IntegerReading reading = read_decimal_integer(spelling, kPythonIntegers);
        reading.status != IntegerStatus::ok && reading.status != IntegerStatus::too_large) {
      fail_at(start, integer_problem(reading, spelling, ""));
    }
    return make(TokenKind::integer, std::move(digits), where);
  }

  // Digits with single `_` separators between them, returned without the separators.
  std::string read_digits() {
    std::string digits;
    while (at_ < text_.size()) {
      if (is_digit(text_[at_])) {
        digits += text_[at_++];
      } else if (text_[at_] == '_' && !digits.empty() && at_ + 1 < text_.size() && is_digit(text_[at_ + 1])) {
        ++at_;
      } else {
        break;
      }
    }
    return digits;
  }

  Token string() {
    const SourcePosition where = position();
    const char quote = text_[at_];
    const bool triple = text_.substr(at_, 3) == std::string(3, quote);
    at_ += triple ? 3 : 1;
    std::string value;
    for (;;) {
      if (at_ >= text_.size()) fail(where, triple ? "unterminated triple-quoted string" : "unterminated string");
      const char c = text_[at_];
      if (c == quote) {
        if (!triple) {
          ++at_;
          break;
        }
        if (text_.substr(at_, 3) == std::string(3, quote)) {
          at_ += 3;
          break;
        }
        value += c;
        ++at_;
      } else if (is_line_break(c)) {
        if (!triple) fail(where, "unterminated string");
        value += '\n';  // as Python reads source: \r\n and \r become \n
        consume_newline();
      } else if (c == '\\') {
        escape(value);
      } else {
        value += c;
        ++at_;
      }
    }
    return make(TokenKind::string, std::move(value), where);
  }

  // at_ is on a backslash inside a string.
  void escape(std::string& value) {
    const std::size_t start = at_++;
    if (at_ >= text_.size()) return;  // the string loop reports it unterminated
    const char c = text_[at_];
    switch (c) {
      case '\n':
      case '\r': consume_newline(); return;  // a line continuation inside the string
      case '\\':
      case '\'':
      case '"': value += c; break;
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case 'r': value += '\r'; break;
      case 'a': value += '\a'; break;
      case 'b': value += '\b'; break;
      case 'f': value += '\f'; break;
      case 'v': value += '\v'; break;
      case 'x': value_from_hex(value, start, 2); return;
      case 'u': value_from_hex(value, start, 4); return;
      case 'U': value_from_hex(value, start, 8); return;
      default:
        if (c >= '0' && c <= '7') {
          std::uint32_t code_point = 0;
          for (int i = 0; i < 3 && at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '7'; ++i) {
            code_point = code_point * 8 + static_cast<std::uint32_t>(text_[at_++] - '0');
          }
          append_utf8(value, code_point);
          return;
        }
        fail_at(start,
                fmt::format("unsupported escape sequence {} in a string", quoted_excerpt(text_.substr(start, 2))));
    }
    ++at_;
  }

  void value_from_hex(std::string& value, std::size_t start, std::size_t count) {
    ++at_;  // the letter
    std::uint32_t code_point = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const char c = at_ < text_.size() ? text_[at_] : '\0';
      const int digit = is_digit(c)              ? c - '0'
                        : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                                 : -1;
      if (digit < 0) {
        fail_at(start, fmt::format("truncated escape sequence {}: it needs {} hex digits",
                                   quoted_excerpt(text_.substr(start, at_ - start + 1)), count));
      }
      code_point = code_point * 16 + static_cast<std::uint32_t>(digit);
      ++at_;
    }
    if (code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      fail_at(start, fmt::format("escape sequence {} is not a Unicode character",
                                 quoted_excerpt(text_.substr(start, at_ - start))));
    }
    append_utf8(value, code_point);
  }

  Token op() {
    const SourcePosition where = position();
    for (const std::string_view candidate : kOperators) {
      if (text_.substr(at_, candidate.size()) == candidate) {
        at_ += candidate.size();
        if (candidate == "(" || candidate == "[" || candidate == "{") {
          ++depth_;
        } else if ((candidate == ")" || candidate == "]" || candidate == "}") && depth_ > 0) {
          --depth_;
        }
        return make(TokenKind::op, std::string(candidate), where);
      }
    }
    fail(fmt::format("unexpected character {}", quoted_excerpt(text_.substr(at_, utf8_length(at_)))));
  }

  // Bytes in the UTF-8 sequence starting at `at`, so that a message shows a whole
  // character; 1 for a byte that starts none.
  std::size_t utf8_length(std::size_t at) const {
    const auto lead = static_cast<unsigned char>(text_[at]);
    const std::size_t length = lead >= 0xF5 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 1;
    if (at + length > text_.size()) return 1;
    for (std::size_t i = 1; i < length; ++i) {
      if ((static_cast<unsigned char>(text_[at + i]) & 0xC0) != 0x80) return 1;
    }
    return length;
  }

  void skip_blanks() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\f')) {
      ++at_;
    }
  }

  void skip_comment() {
    const std::size_t end = text_.find_first_of("\r\n", at_);
    at_ = end == std::string_view::npos ? text_.size() : end;
  }

  // at_ is on a line break: \n, \r\n or a lone \r, as Python's tokenizer reads them.
  void consume_newline() {
    at_ += text_.substr(at_, 2) == "\r\n" ? 2 : 1;
    ++line_;
    line_start_ = at_;
  }

  SourcePosition position() const { return {line_, at_ - line_start_ + 1}; }

  [[noreturn]] void fail(std::string_view message) const { fail(position(), message); }
  [[noreturn]] void fail(SourcePosition where, std::string_view message) const {
    throw_parse_error(source_, where, message);
  }
  // For an offset behind at_ on the current line, or anywhere before the first token.
  [[noreturn]] void fail_at(std::size_t offset, std::string_view message) const {
    SourcePosition where{1, 1};
    for (std::size_t i = text_.starts_with("\xEF\xBB\xBF") ? 3 : 0; i < offset; ++i) {
      if (text_[i] == '\n' || (text_[i] == '\r' && text_.substr(i, 2) != "\r\n")) {
        ++where.line;
        where.column = 1;
      } else {
        ++where.column;
      }
    }
    fail(where, message);
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
  int depth_ = 0;  // open brackets, inside which line breaks do not end a statement
  bool at_line_start_ = true;
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view source, ValueTreeBuilder& builder)
      : tokens_(text, source), source_(source), builder_(builder) {
    advance();
  }

  void parse_file() {
    builder_.begin(ValueKind::table, SourcePosition{1, 1});
    while (current_.kind != TokenKind::end) {
      statement();
      end_of_statement();
    }
    builder_.end();
  }

 private:
  void statement() {
    if (current_.kind == TokenKind::string) {  // a docstring
      advance();
      return;
    }
    if (current_.kind != TokenKind::name) unexpected("an assignment 'name = value'");
    if (is_keyword(current_.text)) not_allowed_keyword();
    const Token name = take();
    if (is_op("=")) {
      if (name.text == "dict")
        fail(name.position, "assigning to 'dict' is not allowed: dict(...) must keep its meaning");
      advance();
      builder_.key(name.text, name.position);
      value();
      return;
    }
    reject_call_or_attribute(name);
    unexpected(fmt::format("'=' after the name {}", quoted_excerpt(name.text)));
  }

  void end_of_statement() {
    if (current_.kind == TokenKind::end) return;
    if (current_.kind == TokenKind::newline) {
      advance();
      return;
    }
    if (is_op(";")) {
      advance();
      if (current_.kind == TokenKind::newline) advance();
      return;
    }
    unexpected("the end of the statement");
  }

  void value() {
    switch (current_.kind) {
      case TokenKind::integer: return scalar(integer_value(current_.text, false));
      case TokenKind::floating: return scalar(float_value(current_.text));
      case TokenKind::string: {
        ConfigValue v;
        v.kind = ValueKind::string;
        v.text = std::move(current_.text);
        return scalar(std::move(v));
      }
      case TokenKind::name: return name_value();
      case TokenKind::op:
        if (is_op("-")) return negative_number();
        if (is_op("{")) return dict_literal();
        if (is_op("[")) return list();
        break;
      case TokenKind::newline:
      case TokenKind::end: break;
    }
    unexpected("a value");
  }

  void name_value() {
    if (current_.text == "True" || current_.text == "False") {
      ConfigValue v;
      v.kind = ValueKind::boolean;
      v.boolean = current_.text == "True";
      return scalar(std::move(v));
    }
    if (current_.text == "None") return scalar(ConfigValue{});
    if (is_keyword(current_.text)) not_allowed_keyword();
    const Token name = take();
    if (name.text == "dict" && is_op("(")) return dict_call(name.position);
    reject_call_or_attribute(name);
    fail(name.position, fmt::format("name {} is not a literal value{}", quoted_excerpt(name.text),
                                    did_you_mean(name.text, kLiteralNames)));
  }

  // `name` was just taken: a call or an attribute access on it is the most telling error.
  void reject_call_or_attribute(const Token& name) {
    if (is_op("(")) {
      fail(name.position,
           fmt::format("call of {} is not allowed, only dict(...) ({})", quoted_excerpt(name.text), kNeverExecuted));
    }
    if (is_op(".")) {
      const Token& attribute = peek();
      const std::string path = attribute.kind == TokenKind::name ? name.text + "." + attribute.text : name.text;
      fail(name.position, fmt::format("attribute access {} is not allowed ({})", quoted_excerpt(path), kNeverExecuted));
    }
  }

  void negative_number() {
    const SourcePosition minus = current_.position;
    advance();
    ConfigValue v;
    if (current_.kind == TokenKind::integer) {
      v = integer_value(current_.text, true);
    } else if (current_.kind == TokenKind::floating) {
      v = float_value(std::string(1, '-').append(current_.text));
    } else {
      unexpected("a number after '-'");
    }
    v.position = minus;
    builder_.scalar(std::move(v));
    advance();
  }

  // current_ is the '(' after `dict`.
  void dict_call(SourcePosition where) {
    advance();
    builder_.begin(ValueKind::table, where);
    while (!is_op(")")) {
      if (current_.kind != TokenKind::name || is_keyword(current_.text)) {
        unexpected("a keyword argument name=value in dict()");
      }
      const Token key = take();
      if (!is_op("=")) unexpected(fmt::format("'=' after the keyword {} in dict()", quoted_excerpt(key.text)));
      advance();
      builder_.key(key.text, key.position);
      value();
      if (!separator(")")) unexpected("',' or ')'");
    }
    advance();
    builder_.end();
  }

  void dict_literal() {
    builder_.begin(ValueKind::table, current_.position);
    advance();  // {
    while (!is_op("}")) {
      if (current_.kind != TokenKind::string) {
        fail(current_.position, fmt::format("dictionary keys must be strings, found {}", describe(current_)));
      }
      const Token key = take();
      if (!is_op(":")) unexpected("':' after a dictionary key");
      advance();
      builder_.key(key.text, key.position);
      value();
      if (!separator("}")) unexpected("',' or '}'");
    }
    advance();
    builder_.end();
  }

  void list() {
    builder_.begin(ValueKind::array, current_.position);
    advance();  // [
    while (!is_op("]")) {
      value();
      if (!separator("]")) unexpected("',' or ']'");
    }
    advance();
    builder_.end();
  }

  // After an element: consumes a ',' and says true, or says whether `close` follows.
  bool separator(std::string_view close) {
    if (is_op(",")) {
      advance();
      return true;
    }
    return is_op(close);
  }

  ConfigValue integer_value(std::string_view digits, bool negative) const {
    ConfigValue v;
    std::string text;
    // Appended rather than concatenated: GCC 12 misreads "-" + string (-Wrestrict).
    if (negative) text += '-';
    text += digits;
    IntegerReading reading = read_decimal_integer(text, kPythonIntegers);
    if (reading.status == IntegerStatus::ok) {
      v.kind = ValueKind::integer;
      v.integer = reading.value;
    } else {
      // The tokenizer let through only digits without leading zeros: too large.
      v.kind = ValueKind::big_integer;
      v.text = std::move(reading.digits);
    }
    v.position = current_.position;
    return v;
  }

  ConfigValue float_value(std::string spelling) const {
    ConfigValue v;
    v.kind = ValueKind::floating;
    v.text = std::move(spelling);
    v.position = current_.position;
    return v;
  }

  void scalar(ConfigValue value) {
    value.position = current_.position;
    builder_.scalar(std::move(value));
    advance();
  }

  [[noreturn]] void not_allowed_keyword() const {
    fail(current_.position, fmt::format("{} is not allowed ({})", quoted_excerpt(current_.text), kNeverExecuted));
  }

  [[noreturn]] void unexpected(std::string_view expected) const {
    std::string message = fmt::format("expected {}, found {}", expected, describe(current_));
    // Punctuation out of place is a plain syntax error; an operator means an expression.
    const bool expression =
        current_.kind == TokenKind::op &&
        !(current_.text.size() == 1 && std::string_view(",;:=)]}").find(current_.text[0]) != std::string_view::npos);
    if (expression) message += " (expressions are not allowed, only literal values)";
    fail(current_.position, message);
  }

  [[noreturn]] void fail(SourcePosition where, std::string_view message) const {
    throw_parse_error(source_, where, message);
  }

  bool is_op(std::string_view text) const { return current_.kind == TokenKind::op && current_.text == text; }

  const Token& peek() {
    if (!peeked_) peeked_ = tokens_.next();
    return *peeked_;
  }

  void advance() {
    if (peeked_) {
      current_ = std::move(*peeked_);
      peeked_.reset();
    } else {
      current_ = tokens_.next();
    }
  }

  Token take() {
    Token token = std::move(current_);
    advance();
    return token;
  }

  Tokenizer tokens_;
  std::string_view source_;
  ValueTreeBuilder& builder_;
  Token current_;
  std::optional<Token> peeked_;
};

}  // namespace

void parse_python_literals(std::string_view text, std::string_view source, ValueTreeBuilder& builder) {
  Parser(text, source, builder).parse_file();
}

ConfigValue read_python_tree(std::string_view text, std::string_view source) {
  ValueTreeBuilder builder(source);
  parse_python_literals(text, source, builder);
  return builder.finish();
}

}  // namespace pgroups::detail
