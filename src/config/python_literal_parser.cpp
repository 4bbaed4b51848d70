#include "python_literal_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "../common/did_you_mean.hpp"
#include "format_readers.hpp"
#include "pgroups/common/decimal_integer.hpp"
#include "python_literal_tokenizer.hpp"

namespace pgroups::detail {
namespace {

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
