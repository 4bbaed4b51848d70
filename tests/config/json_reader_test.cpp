// JSON configurations, read through nlohmann-json's SAX parser with positions.

#include <gtest/gtest.h>

#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"

namespace pgroups {
namespace {

using test::make_config;

ParallelConfig read_json(std::string_view text) { return parse_config(text, ConfigFormat::json); }
std::string rejection(std::string_view text) { return test::parse_error(text, ConfigFormat::json); }

TEST(JsonConfigReader, ByteOrderMarkAndWhitespaceAreAccepted) {
  EXPECT_EQ(read_json("\xEF\xBB\xBF\r\n{ \"parallel\" :\n\t{\"pipeline\"\n:\n2 } }\n"),
            make_config(2, 1, TensorMode::none));
}

TEST(JsonConfigReader, PositionsFollowLinesAndColumns) {
  EXPECT_EQ(
      rejection("{\n  \"parallel\": {\n    \"pipeline\": 2,\n    \"tensor\": {\"size\": 4, \"mode\": true}\n  }\n}\n"),
      "<config>:4:35: parallel.tensor.mode must be a string or null, found boolean true");
  EXPECT_EQ(rejection("{\"parallel\": {\"seed\":-1.5}}"),
            "<config>:1:22: parallel.seed must be an integer, found float -1.5");
  EXPECT_EQ(rejection("{\"parallel\": {\"seed\" : [1, 2],\"pipline\": 2}}"),
            "<config>:1:24: parallel.seed must be an integer, found array");
  EXPECT_EQ(rejection("{\"parallel\": {\"seed\" : 1 ,  \"pipline\": 2}}"),
            "<config>:1:29: unknown key 'pipline' in parallel; the keys are pipeline, tensor, world_size, "
            "legacy_sequence_dp, seed, gpus_per_node, rank_map (did you mean pipeline?)");
}

TEST(JsonConfigReader, EscapedQuotesInKeysAndStringsKeepPositions) {
  EXPECT_EQ(rejection("{\"parallel\": {\"seed\": 1, \"x\\\"\": \"\\\"\"}, \"a\\\"b\": 1}"),
            "<config>:1:26: unknown key 'x\"' in parallel; the keys are pipeline, tensor, world_size, "
            "legacy_sequence_dp, seed, gpus_per_node, rank_map");
  EXPECT_EQ(rejection("{\"mesh\": {\"order\": \"tp\", \"x\\\"\": \"\\\"\"}, \"a\\\"b\": 1}"),
            "<config>:1:33: mesh.x\" must be an integer (the size of dimension 'x\"'), found string \"\\\"\"; the "
            "other keys of mesh are order and groups");
  EXPECT_EQ(rejection("{\"parallel\": {\"seed\": \"\\\"\"}}"),
            "<config>:1:23: parallel.seed must be an integer, found string \"\\\"\"");
}

TEST(JsonConfigReader, SyntaxErrorIsReportedWithItsPosition) {
  EXPECT_EQ(rejection("{\"parallel\": {\"pipeline\": 2,}}"),
            "<config>:1:29: syntax error while parsing object key - unexpected '}'; expected string literal");
  EXPECT_EQ(rejection("{\"parallel\": {}} x"),
            "<config>:1:18: syntax error while parsing value - invalid literal; last read: '\"parallel\": {}} x'; "
            "expected end of input");
  EXPECT_EQ(rejection("// comment\n{}"),
            "<config>:1:1: syntax error while parsing value - invalid literal; last read: '/'");
}

TEST(JsonConfigReader, UnterminatedStringIsReportedWithItsPosition) {
  EXPECT_EQ(rejection("{\"parallel\": {\"tensor\": {\"mode\": \"2d}}}\n"),
            "<config>:1:40: syntax error while parsing value - invalid string: control character U+000A (LF) must "
            "be escaped to \\u000A or \\n; last read: '\"2d}}}<U+000A>'");
  EXPECT_EQ(rejection("{\"parallel\": {\"tensor\": {\"mode\": \"2d"),
            "<config>:1:37: syntax error while parsing value - invalid string: missing closing quote; last read: "
            "'\"2d'");
}

TEST(JsonConfigReader, NumberTooLargeForADoubleIsASyntaxError) {
  EXPECT_EQ(rejection("{\"x\": 1e999}"), "<config>:1:11: number overflow parsing '1e999'");
}

}  // namespace
}  // namespace pgroups
