// The one integer reader shared by the config readers and the command line.

#include <gtest/gtest.h>

#include <limits>

#include "pgroups/common/decimal_integer.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"

namespace pgroups::detail {
namespace {

constexpr IntegerSyntax kCommandLine{};
constexpr IntegerSyntax kToml{.plus_sign = true, .digit_separators = true, .repeated_zeros = false};
constexpr IntegerSyntax kPython{.plus_sign = false, .digit_separators = true, .repeated_zeros = true};

IntegerStatus status(std::string_view text, IntegerSyntax syntax = kCommandLine) {
  return read_decimal_integer(text, syntax).status;
}

TEST(ConfigDecimalInteger, ReadsPlainDecimalsExactlyToTheEndsOfInt64) {
  EXPECT_EQ(read_decimal_integer("0").value, 0);
  EXPECT_EQ(read_decimal_integer("-0").value, 0);
  EXPECT_EQ(read_decimal_integer("42").value, 42);
  EXPECT_EQ(read_decimal_integer("-42").value, -42);
  EXPECT_EQ(read_decimal_integer("9223372036854775807").value, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(read_decimal_integer("-9223372036854775808").value, std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(status("9223372036854775807"), IntegerStatus::ok);
}

TEST(ConfigDecimalInteger, NeverClampsAndKeepsTheDigitsOfTooLargeValues) {
  const IntegerReading above = read_decimal_integer("9223372036854775808");
  EXPECT_EQ(above.status, IntegerStatus::too_large);
  EXPECT_EQ(above.digits, "9223372036854775808");
  const IntegerReading below = read_decimal_integer("-9223372036854775809");
  EXPECT_EQ(below.status, IntegerStatus::too_large);
  EXPECT_EQ(below.digits, "-9223372036854775809");
  EXPECT_EQ(status(std::string(1000, '9')), IntegerStatus::too_large);
  EXPECT_EQ(status("18446744073709551616"), IntegerStatus::too_large);  // 2^64, which would wrap to 0
}

TEST(ConfigDecimalInteger, OtherBasesAndLeadingZerosAreNeverDecimal) {
  for (const char* text : {"0x10", "0X10", "0o10", "0O10", "0b10", "0B10", "-0x10", "0x"}) {
    EXPECT_EQ(status(text), IntegerStatus::not_decimal) << text;
    EXPECT_EQ(status(text, kToml), IntegerStatus::not_decimal) << text;
  }
  for (const char* text : {"010", "-010", "00", "08"}) {
    EXPECT_EQ(status(text), IntegerStatus::leading_zero) << text;
  }
  EXPECT_EQ(status("00", kPython), IntegerStatus::ok);  // 0 in Python
  EXPECT_EQ(status("0_0", kPython), IntegerStatus::ok);
  EXPECT_EQ(status("0_1", kPython), IntegerStatus::leading_zero);
}

TEST(ConfigDecimalInteger, AnythingElseIsMalformedUnlessTheSyntaxAllowsIt) {
  for (const char* text : {"", "-", "+", " 8", "8 ", "1e3", "8.0", "eight", "--8", "1,000", "8_0", "+8", "_8", "8_",
                           "1__0", "\xef\xbc\x98"}) {
    EXPECT_EQ(status(text), IntegerStatus::malformed) << text;
  }
  EXPECT_EQ(read_decimal_integer("+8", kToml).value, 8);
  EXPECT_EQ(read_decimal_integer("1_000", kToml).value, 1000);
  EXPECT_EQ(read_decimal_integer("1_000", kPython).value, 1000);
  EXPECT_EQ(status("+8", kPython), IntegerStatus::malformed);
  EXPECT_EQ(status("1__0", kPython), IntegerStatus::malformed);
  EXPECT_EQ(status("8_", kToml), IntegerStatus::malformed);
}

TEST(ConfigDecimalInteger, MessagesNameTheSettingAndQuoteTheTextEscapedAndCut) {
  EXPECT_EQ(integer_problem(read_decimal_integer("010"), "010", "--pipeline"),
            "--pipeline: leading zeros are not allowed in the integer '010'");
  EXPECT_EQ(integer_problem(read_decimal_integer("010"), "010", ""),
            "leading zeros are not allowed in the integer '010'");
  EXPECT_EQ(integer_problem(read_decimal_integer("0x1F"), "0x1F", "--tensor"),
            "--tensor: only decimal numbers are read, found '0x1F'");
  EXPECT_EQ(integer_problem(read_decimal_integer("1e3"), "1e3", "--seed"), "--seed must be an integer, found '1e3'");
  EXPECT_EQ(integer_problem(read_decimal_integer("\x1b[2J"), "\x1b[2J", "--seed"),
            "--seed must be an integer, found '\\x1b[2J'");
  const std::string huge(100, '5');
  EXPECT_EQ(integer_problem(read_decimal_integer(huge), huge, "parallel.pipeline"),
            "parallel.pipeline " + std::string(40, '5') + "... does not fit in a 64-bit integer");
  EXPECT_EQ(integer_range_problem(3000000000, 0, 2147483647, "--repeats"),
            "--repeats 3000000000 is out of range: it must be from 0 to 2147483647");
}

TEST(ConfigDecimalInteger, EveryFormatReadsTheSettingsIntegersAsDecimalOnly) {
  using test::parse_error;
  // TOML writes hex, octal and binary integers; a setting takes decimal only, as Python
  // settings and the command line do. Elsewhere in the file they are left alone.
  EXPECT_EQ(parse_error("[parallel]\npipeline = 0x10\n", ConfigFormat::toml),
            "<config>:2:12: only decimal numbers are read, found '0x10'");
  EXPECT_EQ(parse_error("[parallel]\ntensor = { size = 0o4, mode = \"2d\" }\n", ConfigFormat::toml),
            "<config>:2:19: only decimal numbers are read, found '0o4'");
  EXPECT_EQ(parse_error("[parallel]\nseed = 0b101 # binary\n", ConfigFormat::toml),
            "<config>:2:8: only decimal numbers are read, found '0b101'");
  EXPECT_EQ(parse_error("parallel = dict(pipeline=0x10)", ConfigFormat::python),
            "<config>:1:26: only decimal numbers are read, found '0x10'");
  EXPECT_EQ(parse_error("parallel = dict(pipeline=010)", ConfigFormat::python),
            "<config>:1:26: leading zeros are not allowed in the integer '010'");
  EXPECT_EQ(parse_config("[parallel]\npipeline = +1_0\n", ConfigFormat::toml).pipeline, 10);
  // Columns after non-ASCII text on the line are counted in characters, as toml++ does.
  EXPECT_EQ(parse_error("[parallel]\ntensor = { mode = \"\u00e9\u00e9\", size = 0x4 }\n", ConfigFormat::toml),
            "<config>:2:32: only decimal numbers are read, found '0x4'");
}

}  // namespace
}  // namespace pgroups::detail
