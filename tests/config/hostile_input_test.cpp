// Hostile input: every reader answers with a clean ParseError, quickly, and never
// crashes, whatever the bytes.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using test::make_config;
using test::parse_error;

constexpr std::size_t kDeep = 100'000;

// Loose on purpose: these bound a pathological slowdown, not performance, and must hold
// under sanitizers and on a busy machine.
constexpr double kGenerousSeconds = 5.0;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string repeat(std::string_view part, std::size_t count) {
  std::string text;
  text.reserve(part.size() * count);
  for (std::size_t i = 0; i < count; ++i) text += part;
  return text;
}

class EveryConfigFormat : public ::testing::TestWithParam<ConfigFormat> {};

TEST_P(EveryConfigFormat, EmptyInputIsRejected) {
  EXPECT_EQ(parse_error("", GetParam()), "<config>: the configuration is empty");
  EXPECT_EQ(parse_error(" \n\t\r\n", GetParam()), "<config>: the configuration is empty");
}

TEST_P(EveryConfigFormat, TwentyMebibytesOfWhitespaceIsRejectedQuickly) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(parse_error(std::string(20u << 20, ' '), GetParam()), "<config>: the configuration is empty");
  EXPECT_LT(seconds_since(start), kGenerousSeconds);
}

TEST_P(EveryConfigFormat, ConfigAfterTwentyMebibytesOfWhitespaceIsReadQuickly) {
  // 20 MiB of whitespace in all, in three runs around and inside the settings.
  const std::string padding = repeat(" \n\t  \r\n", (20u << 20) / 7 / 3);
  std::string text;
  switch (GetParam()) {
    case kToml: text = padding + "[parallel]" + padding + "pipeline = 2" + padding; break;
    case kJson: text = padding + "{\"parallel\":" + padding + "{\"pipeline\": 2}}" + padding; break;
    case kPython: text = padding + "parallel = dict(" + padding + "pipeline=2)" + padding; break;
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(parse_config(text, GetParam()), make_config(2, 1, TensorMode::none));
  EXPECT_LT(seconds_since(start), kGenerousSeconds);
}

TEST_P(EveryConfigFormat, BinaryGarbageIsAParseError) {
  std::string garbage;
  std::uint32_t state = 12345;
  for (int i = 0; i < 4096; ++i) {
    state = state * 1103515245u + 12345u;
    garbage += static_cast<char>(state >> 24);
  }
  // Each reader names the first byte it cannot take and where it is.
  const std::map<ConfigFormat, std::pair<std::string, std::string>> expected = {
      {kToml,
       {"<config>:1:1: encountered invalid utf-8 sequence",
        "<config>:1:1: error while parsing root table: expected keys, tables, whitespace or comments, saw '\\u007F'"}},
      {kJson,
       {"<config>:1:102: unexpected NUL byte",
        "<config>:1:1: syntax error while parsing value - invalid literal; last read: '\\x7f'"}},
      {kPython, {"<config>:2:98: unexpected NUL byte", "<config>:1:1: unexpected character '\\x7f'"}},
  };
  EXPECT_EQ(test::message_of<ParseError>([&] { (void)parse_config(garbage, GetParam()); }),
            expected.at(GetParam()).first);
  const std::string elf_header = std::string("\x7f") + "ELF\x02\x01\x01";
  EXPECT_EQ(test::message_of<ParseError>([&] { (void)parse_config(elf_header, GetParam()); }),
            expected.at(GetParam()).second);
}

INSTANTIATE_TEST_SUITE_P(Readers, EveryConfigFormat, ::testing::Values(kToml, kJson, kPython),
                         [](const ::testing::TestParamInfo<ConfigFormat>& param_info) {
                           switch (param_info.param) {
                             case kToml: return std::string("toml");
                             case kJson: return std::string("json");
                             case kPython: return std::string("python");
                           }
                           return std::string("unknown");
                         });

TEST(HostileConfigInput, BinaryGarbageMessagesAreEscaped) {
  EXPECT_EQ(parse_error("\xff\xfe garbage", kToml), "<config>:1:1: encountered invalid utf-8 sequence");
  EXPECT_EQ(parse_error("\xff\xfe garbage", kJson),
            "<config>:1:1: syntax error while parsing value - invalid literal; last read: '\\xff'");
  EXPECT_EQ(parse_error("\xff\xfe garbage", kPython), "<config>:1:1: invalid UTF-8 byte 0xff");
  EXPECT_EQ(parse_error("x = 1\n# comment \xc3\x28\n", kPython), "<config>:2:11: invalid UTF-8 byte 0xc3");
  EXPECT_EQ(parse_error("x = '\xed\xa0\x80'", kPython), "<config>:1:6: invalid UTF-8 byte 0xed");  // a surrogate
  EXPECT_EQ(parse_config("x = '\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80'\nparallel = dict(pipeline=2)", kPython),
            make_config(2, 1, TensorMode::none));
}

TEST(HostileConfigInput, NulBytesAreRejectedWithTheirPosition) {
  using namespace std::string_literals;
  EXPECT_EQ(parse_error("[parallel]\npipeline = 2\0"s, kToml),
            "<config>:2:13: error while parsing decimal integer: expected digit, saw '\\u0000'");
  // nlohmann alone would take a NUL for the end of input and ignore what follows.
  EXPECT_EQ(parse_error("{\"parallel\": {\"pipeline\": 2}}\0{garbage"s, kJson), "<config>:1:30: unexpected NUL byte");
  EXPECT_EQ(parse_error("parallel = dict(\0pipeline=2)"s, kPython), "<config>:1:17: unexpected NUL byte");
  EXPECT_EQ(parse_error("x = 'a\0b'"s, kPython), "<config>:1:7: unexpected NUL byte");
}

struct DeepCase {
  std::string name;
  ConfigFormat format;
  std::string text;
  std::string message;
};

std::ostream& operator<<(std::ostream& out, const DeepCase& deep) { return out << deep.name; }

class DeepConfigNesting : public ::testing::TestWithParam<DeepCase> {};

TEST_P(DeepConfigNesting, HundredThousandLevelsStopAtTheLimitWithoutOverflowingTheStack) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(parse_error(GetParam().text, GetParam().format), GetParam().message);
  EXPECT_LT(seconds_since(start), kGenerousSeconds);
}

std::vector<DeepCase> deep_cases() {
  const std::string message = "nesting is deeper than 64 levels";
  std::vector<DeepCase> cases;
  cases.push_back({"toml_arrays", kToml, "a = " + std::string(kDeep, '['), "<config>:1:68: " + message});
  cases.push_back({"toml_inline_tables", kToml, "a = " + repeat("{b=", kDeep), "<config>:1:194: " + message});
  cases.push_back({"toml_dotted_keys", kToml, repeat("a.", kDeep) + "a = 1", "<config>:1:128: " + message});
  cases.push_back({"toml_table_header", kToml, "[" + repeat("a.", kDeep) + "a]", "<config>:1:127: " + message});
  cases.push_back({"toml_header_plus_dotted_keys", kToml, "[" + repeat("a.", 40) + "a]\n" + repeat("b.", 40) + "b = 1",
                   "<config>:2:46: " + message});
  cases.push_back({"json_arrays", kJson, std::string(kDeep, '['), "<config>:1:65: " + message});
  cases.push_back({"json_objects", kJson, repeat("{\"a\":", kDeep), "<config>:1:321: " + message});
  cases.push_back({"python_dict_calls", kPython, "x = " + repeat("dict(a=", kDeep), "<config>:1:446: " + message});
  cases.push_back({"python_lists", kPython, "x = " + std::string(kDeep, '['), "<config>:1:68: " + message});
  cases.push_back({"python_dict_literals", kPython, "x = " + repeat("{'a':", kDeep), "<config>:1:320: " + message});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllFormats, DeepConfigNesting, ::testing::ValuesIn(deep_cases()),
                         [](const ::testing::TestParamInfo<DeepCase>& param_info) { return param_info.param.name; });

TEST(HostileConfigInput, NestingUpToTheLimitIsAccepted) {
  // The top level is level 1, so 63 brackets inside it reach level 64.
  // Accepted by the nesting checks: what is left is the unknown top-level key `a` of a
  // TOML or JSON file (a .py config keeps its other keys).
  const std::string unknown_a =
      "unknown top-level key 'a': a {} configuration holds parallel, mesh and cluster only; a "
      "training run's other settings belong in a file of their own";
  EXPECT_EQ(parse_error("a = " + std::string(63, '[') + std::string(63, ']') + "\n[parallel]\npipeline = 2\n", kToml),
            "<config>:1:1: " + fmt::format(fmt::runtime(unknown_a), "TOML"));
  EXPECT_EQ(parse_error("{\"a\": " + std::string(63, '[') + std::string(63, ']') + ", \"parallel\": {}}", kJson),
            "<config>:1:2: " + fmt::format(fmt::runtime(unknown_a), "JSON"));
  EXPECT_EQ(parse_config("a = " + std::string(63, '[') + std::string(63, ']'), kPython), ParallelConfig{});
  EXPECT_EQ(parse_error(repeat("a.", 63) + "a = 1\n", kToml),
            "<config>:1:1: " + fmt::format(fmt::runtime(unknown_a), "TOML"));
  EXPECT_EQ(parse_error(repeat("a.", 64) + "a = 1\n", kToml), "<config>:1:128: nesting is deeper than 64 levels");
}

TEST(HostileConfigInput, HugeIntegerIsNamedButCutInTheMessage) {
  const std::string digits(1'000'000, '7');
  EXPECT_EQ(parse_error("parallel = dict(pipeline=" + digits + ")", kPython),
            "<config>:1:26: parallel.pipeline 7777777777777777777777777777777777777777... does not fit in a 64-bit "
            "integer");
  EXPECT_EQ(parse_error("{\"parallel\": {\"pipeline\": " + digits.substr(0, 300) + "}}", kJson),
            "<config>:1:27: parallel.pipeline 7777777777777777777777777777777777777777... does not fit in a 64-bit "
            "integer");
  // Past a double's range nlohmann rejects the number itself, where it ends.
  EXPECT_EQ(parse_error("{\"parallel\": {\"pipeline\": " + digits + "}}", kJson),
            "<config>:1:1000026: number overflow parsing '" + std::string(175, '7') + "...");
  // Ignored entries may hold any integer.
  EXPECT_EQ(parse_config("big = " + digits + "\nparallel = dict(pipeline=2)", kPython),
            make_config(2, 1, TensorMode::none));
}

TEST(HostileConfigInput, HugeStringsAndManyEntriesElsewhereAreIgnored) {
  const std::string big(8u << 20, 'x');
  std::string python = "a = '" + big + "'\n";
  for (int i = 0; i < 100'000; ++i) python.append("k").append(std::to_string(i)).append(" = [1, 2, {'x': None}]\n");
  python += "parallel = dict(pipeline=2)\n";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(parse_config(python, kPython), make_config(2, 1, TensorMode::none));
  EXPECT_LT(seconds_since(start), kGenerousSeconds);
}

TEST(HostileConfigInput, UnterminatedStringsReportWhereTheyStart) {
  EXPECT_EQ(parse_error("[parallel]\ntensor = { mode = \"2d", kToml),
            "<config>:2:22: error while parsing string: encountered end-of-file");
  EXPECT_EQ(parse_error("{\"parallel\": \"abc", kJson),
            "<config>:1:18: syntax error while parsing value - invalid string: missing closing quote; last read: "
            "'\"abc'");
  EXPECT_EQ(parse_error("x = 1\nparallel = dict(tensor=dict(mode=\"2d", kPython), "<config>:2:34: unterminated string");
}

}  // namespace
}  // namespace pgroups
