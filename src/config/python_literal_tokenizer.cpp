#include "python_literal_tokenizer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "format_readers.hpp"

namespace pgroups::detail {
namespace {

// Python's keywords less True, False and None, which are literals here.
constexpr auto kKeywords = std::to_array<std::string_view>(
    {"and",      "as",     "assert",  "async", "await", "break",  "class", "continue", "def",  "del",  "elif",
     "else",     "except", "finally", "for",   "from",  "global", "if",    "import",   "in",   "is",   "lambda",
     "nonlocal", "not",    "or",      "pass",  "raise", "return", "try",   "while",    "with", "yield"});

// Longest first, so that the first match is the longest one.
constexpr auto kOperators = std::to_array<std::string_view>(
    {"**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=",
     "-=",  "*=",  "/=",  "%=",  "@=",  "&=", "|=", "^=", "+",  "-",  "*",  "/",  "%",  "@",  "&",  "|",
     "^",   "~",   "<",   ">",   "=",   ":",  ".",  ",",  ";",  "(",  ")",  "[",  "]",  "{",  "}",  "!"});

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

}  // namespace

bool is_keyword(std::string_view name) {
  return std::find(kKeywords.begin(), kKeywords.end(), name) != kKeywords.end();
}

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

Tokenizer::Tokenizer(std::string_view text, std::string_view source) : text_(text), source_(source) {
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

Token Tokenizer::next() {
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

Token Tokenizer::make(TokenKind kind, std::string text, SourcePosition where) const {
  return Token{kind, std::move(text), where};
}

Token Tokenizer::name() {
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

Token Tokenizer::number() {
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

std::string Tokenizer::read_digits() {
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

Token Tokenizer::string() {
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

void Tokenizer::escape(std::string& value) {
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
      fail_at(start, fmt::format("unsupported escape sequence {} in a string", quoted_excerpt(text_.substr(start, 2))));
  }
  ++at_;
}

void Tokenizer::value_from_hex(std::string& value, std::size_t start, std::size_t count) {
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

Token Tokenizer::op() {
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

std::size_t Tokenizer::utf8_length(std::size_t at) const {
  const auto lead = static_cast<unsigned char>(text_[at]);
  const std::size_t length = lead >= 0xF5 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 1;
  if (at + length > text_.size()) return 1;
  for (std::size_t i = 1; i < length; ++i) {
    if ((static_cast<unsigned char>(text_[at + i]) & 0xC0) != 0x80) return 1;
  }
  return length;
}

void Tokenizer::skip_blanks() {
  while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\f')) {
    ++at_;
  }
}

void Tokenizer::skip_comment() {
  const std::size_t end = text_.find_first_of("\r\n", at_);
  at_ = end == std::string_view::npos ? text_.size() : end;
}

void Tokenizer::consume_newline() {
  at_ += text_.substr(at_, 2) == "\r\n" ? 2 : 1;
  ++line_;
  line_start_ = at_;
}

SourcePosition Tokenizer::position() const { return {line_, at_ - line_start_ + 1}; }

void Tokenizer::fail(std::string_view message) const { fail(position(), message); }

void Tokenizer::fail(SourcePosition where, std::string_view message) const {
  throw_parse_error(source_, where, message);
}

void Tokenizer::fail_at(std::size_t offset, std::string_view message) const {
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

}  // namespace pgroups::detail
