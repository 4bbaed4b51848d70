#pragma once
/// \file
/// The one reader of integer text: what the config readers and every integer option of
/// the command line accept, and the words they reject it with (target pgroups::common).

#include <cstdint>
#include <string>
#include <string_view>

namespace pgroups {

/// What an integer's text may hold beyond an optional '-' and decimal digits without
/// leading zeros. The command line allows nothing more; TOML adds a '+' and '_' between
/// digits; Python '_' between digits and a run of zeros ("00" is 0 in Python).
struct IntegerSyntax {
  bool plus_sign = false;
  bool digit_separators = false;
  bool repeated_zeros = false;
};

enum class IntegerStatus : std::uint8_t {
  ok,
  too_large,     ///< well-formed, but outside int64
  leading_zero,  ///< "010": octal in some languages, so never read as decimal
  not_decimal,   ///< "0x10", "0o10", "0b10"
  malformed,     ///< anything else: "", " 8", "8 ", "1e3", "8.0", "eight", "+8" without plus_sign
};

struct IntegerReading {
  IntegerStatus status = IntegerStatus::malformed;
  std::int64_t value = 0;  ///< when ok
  std::string digits;      ///< when too_large: the sign and digits, without separators
};

/// Reads all of `text` as one decimal integer under `syntax`; never throws, never
/// clamps. O(size of text).
[[nodiscard]] IntegerReading read_decimal_integer(std::string_view text, IntegerSyntax syntax = {});

/// The message for a reading that is not ok, in the config readers' words, naming
/// `name` (a setting such as "parallel.pipeline" or an option such as "--pipeline"; it
/// may be empty for a bare literal) and quoting `text` escaped and cut:
///   too_large:    "<name> 99999999999999999999 does not fit in a 64-bit integer"
///   leading_zero: "<name>: leading zeros are not allowed in the integer '010'"
///   not_decimal:  "<name>: only decimal numbers are read, found '0x10'"
///   malformed:    "<name> must be an integer, found '1e3'"
[[nodiscard]] std::string integer_problem(const IntegerReading& reading, std::string_view text, std::string_view name);

/// A value of the right form outside [min, max] (a narrower option type, or a rule of
/// the option): "<name> <value> is out of range: it must be from <min> to <max>".
[[nodiscard]] std::string integer_range_problem(std::int64_t value, std::int64_t min, std::int64_t max,
                                                std::string_view name);

}  // namespace pgroups
