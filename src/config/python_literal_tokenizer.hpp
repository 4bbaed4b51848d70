#pragma once
// The tokens of pgroups' Python-literal reader: Python's lexical rules (names, numbers,
// strings with their escapes, operators, line joins, comments), apart from the grammar
// that python_literal_parser.cpp builds on them. Internal to pgroups::config.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pgroups/common/decimal_integer.hpp"
#include "value_tree.hpp"

namespace pgroups::detail {

// Python's decimal integers: `_` between digits, and "00" is 0.
inline constexpr IntegerSyntax kPythonIntegers{.plus_sign = false, .digit_separators = true, .repeated_zeros = true};

inline constexpr std::string_view kNeverExecuted = "a Python config is read as literals, never executed";

inline constexpr auto kLiteralNames = std::to_array<std::string_view>({"True", "False", "None"});

/// Python's keywords less True, False and None, which are literals here.
[[nodiscard]] bool is_keyword(std::string_view name);

enum class TokenKind : std::uint8_t { name, integer, floating, string, op, newline, end };

struct Token {
  TokenKind kind = TokenKind::end;
  // A name or operator as written; an integer's digits without `_`; a float's spelling;
  // a string's decoded value.
  std::string text;
  SourcePosition position;
};

// What a message calls a token: "name 'os'", "'+'", "end of line".
[[nodiscard]] std::string describe(const Token& token);

/// Turns `text` into tokens, one next() at a time; a ParseError "source:line:col: ..." for
/// what Python's lexer refuses (NUL bytes, invalid UTF-8, prefixed strings, bad escapes,
/// indentation). Keeps a view of `text` and `source`: both must outlive it.
class Tokenizer {
 public:
  Tokenizer(std::string_view text, std::string_view source);
  Token next();

 private:
  Token make(TokenKind kind, std::string text, SourcePosition where) const;
  Token name();
  Token number();
  // Digits with single `_` separators between them, returned without the separators.
  std::string read_digits();
  Token string();
  // at_ is on a backslash inside a string.
  void escape(std::string& value);
  void value_from_hex(std::string& value, std::size_t start, std::size_t count);
  Token op();
  // Bytes in the UTF-8 sequence starting at `at`, so that a message shows a whole
  // character; 1 for a byte that starts none.
  std::size_t utf8_length(std::size_t at) const;
  void skip_blanks();
  void skip_comment();
  // at_ is on a line break: \n, \r\n or a lone \r, as Python's tokenizer reads them.
  void consume_newline();
  SourcePosition position() const;
  [[noreturn]] void fail(std::string_view message) const;
  [[noreturn]] void fail(SourcePosition where, std::string_view message) const;
  // For an offset behind at_ on the current line, or anywhere before the first token.
  [[noreturn]] void fail_at(std::size_t offset, std::string_view message) const;

  std::string_view text_;
  std::string_view source_;
  std::size_t at_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
  int depth_ = 0;  // open brackets, inside which line breaks do not end a statement
  bool at_line_start_ = true;
};

}  // namespace pgroups::detail
