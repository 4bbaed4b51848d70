#include "pgroups/common/decimal_integer.hpp"

#include <fmt/format.h>

#include <limits>

#include "pgroups/common/printable.hpp"

namespace pgroups {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

IntegerReading read_decimal_integer(std::string_view text, IntegerSyntax syntax) {
  IntegerReading reading;
  std::size_t at = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative || (syntax.plus_sign && !text.empty() && text[0] == '+')) at = 1;
  const std::string_view body = text.substr(at);
  if (body.size() >= 2 && body[0] == '0' && std::string_view("xXoObB").find(body[1]) != std::string_view::npos) {
    reading.status = IntegerStatus::not_decimal;
    return reading;
  }
  std::string digits;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (is_digit(c)) {
      digits += c;
    } else if (c == '_' && syntax.digit_separators && i > 0 && is_digit(body[i - 1]) && i + 1 < body.size() &&
               is_digit(body[i + 1])) {
      continue;
    } else {
      return reading;  // malformed
    }
  }
  if (digits.empty()) return reading;
  if (digits.size() > 1 && digits[0] == '0' &&
      !(syntax.repeated_zeros && digits.find_first_not_of('0') == std::string::npos)) {
    reading.status = IntegerStatus::leading_zero;
    return reading;
  }
  // The magnitude, if it fits in 64 bits unsigned; int64 then takes one more negative.
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t magnitude = 0;
  bool fits = true;
  for (const char c : digits) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (magnitude > (kMax + 1 - digit) / 10) {
      fits = false;
      break;
    }
    magnitude = magnitude * 10 + digit;
  }
  if (fits && (magnitude <= kMax || (negative && magnitude == kMax + 1))) {
    reading.status = IntegerStatus::ok;
    reading.value = magnitude <= kMax
                        ? (negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude))
                        : std::numeric_limits<std::int64_t>::min();
    return reading;
  }
  reading.status = IntegerStatus::too_large;
  if (negative) reading.digits += '-';
  reading.digits += digits;
  return reading;
}

std::string integer_problem(const IntegerReading& reading, std::string_view text, std::string_view name) {
  const std::string prefix = name.empty() ? std::string() : fmt::format("{}: ", name);
  switch (reading.status) {
    case IntegerStatus::too_large:
      return fmt::format("{}{}{} does not fit in a 64-bit integer", name, name.empty() ? "" : " ",
                         printable_excerpt(reading.digits, 40));
    case IntegerStatus::leading_zero:
      return fmt::format("{}leading zeros are not allowed in the integer {}", prefix, quoted_excerpt(text));
    case IntegerStatus::not_decimal:
      return fmt::format("{}only decimal numbers are read, found {}", prefix, quoted_excerpt(text));
    case IntegerStatus::ok:
    case IntegerStatus::malformed: break;
  }
  return fmt::format("{}{}must be an integer, found {}", name, name.empty() ? "" : " ", quoted_excerpt(text));
}

std::string integer_range_problem(std::int64_t value, std::int64_t min, std::int64_t max, std::string_view name) {
  return fmt::format("{} {} is out of range: it must be from {} to {}", name, value, min, max);
}

}  // namespace pgroups
