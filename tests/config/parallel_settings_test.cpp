// The `parallel` settings: keys, types and their messages, the same in every format but
// for the format's own words (table/object/dict, null/None).

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using test::config_error;
using test::make_config;
using test::parse_error;

TEST(ConfigParallelSettings, EveryKeyReadsTheSameInEveryFormat) {
  ParallelConfig expected = make_config(2, 8, TensorMode::tensor_2p5d, 2);
  expected.world_size = 32;
  expected.legacy_sequence_dp = true;
  expected.seed = 7;
  EXPECT_EQ(parse_config("[parallel]\n"
                         "world_size = 32\n"
                         "pipeline = { size = 2 }\n"
                         "tensor = { size = 8, mode = \"2.5d\", depth = 2 }\n"
                         "legacy_sequence_dp = true\n"
                         "seed = 7\n",
                         kToml),
            expected);
  EXPECT_EQ(parse_config(R"({"parallel": {"world_size": 32, "pipeline": {"size": 2},
                             "tensor": {"size": 8, "mode": "2.5d", "depth": 2},
                             "legacy_sequence_dp": true, "seed": 7}})",
                         kJson),
            expected);
  EXPECT_EQ(parse_config("parallel = dict(world_size=32, pipeline=dict(size=2),\n"
                         "                tensor=dict(size=8, mode='2.5d', depth=2),\n"
                         "                legacy_sequence_dp=True, seed=7)\n",
                         kPython),
            expected);
}

TEST(ConfigParallelSettings, SpecExampleReadsTheSameInEveryFormat) {
  const ParallelConfig expected = make_config(2, 4, TensorMode::tensor_2d);
  EXPECT_EQ(parse_config("[parallel]\npipeline = 2\ntensor = { size = 4, mode = \"2d\" }\n", kToml), expected);
  EXPECT_EQ(parse_config(R"({"parallel": {"pipeline": 2, "tensor": {"size": 4, "mode": "2d"}}})", kJson), expected);
  EXPECT_EQ(parse_config("parallel = dict(pipeline=2, tensor=dict(size=4, mode='2d'))", kPython), expected);
}

TEST(ConfigParallelSettings, TensorAsAPlainIntegerIsItsSize) {
  const ParallelConfig expected = make_config(1, 4, TensorMode::none);
  EXPECT_EQ(parse_config("[parallel]\ntensor = 4\n", kToml), expected);
  EXPECT_EQ(parse_config(R"({"parallel": {"tensor": 4}})", kJson), expected);
  EXPECT_EQ(parse_config("parallel = dict(tensor=4)", kPython), expected);
}

TEST(ConfigParallelSettings, DictLiteralWithStringKeysEqualsDictCall) {
  EXPECT_EQ(parse_config("parallel = {'pipeline': 2, \"tensor\": {'size': 4, 'mode': '2d'}}", kPython),
            make_config(2, 4, TensorMode::tensor_2d));
}

TEST(ConfigParallelSettings, NoParallelSettingsMeanTheDefaults) {
  EXPECT_EQ(parse_config("[parallel]\n", kToml), ParallelConfig{});
  EXPECT_EQ(parse_config("{}", kJson), ParallelConfig{});
  EXPECT_EQ(parse_config(R"({"parallel": {}})", kJson), ParallelConfig{});
  EXPECT_EQ(parse_config("BATCH_SIZE = 128\nmodel = dict(layers=[1, 2, 3])\n", kPython), ParallelConfig{});
}

TEST(ConfigParallelSettings, ATableMustGiveItsSize) {
  // As in Colossal-AI, which reads table['size']; silent_defaults_test.cpp has every format.
  EXPECT_EQ(parse_error("[parallel]\npipeline = {}\n", kToml),
            "<config>:2:12: parallel.pipeline has no size: a pipeline table must give its size (size = N)");
  EXPECT_EQ(parse_error("[parallel]\ntensor = { mode = \"1d\" }\n", kToml),
            "<config>:2:10: parallel.tensor has no size: a tensor table must give its size (size = N)");
}

TEST(ConfigParallelSettings, ModeAndDepthMayBeNull) {
  const ParallelConfig expected = make_config(1, 4, TensorMode::none);
  EXPECT_EQ(parse_config(R"({"parallel": {"tensor": {"size": 4, "mode": null, "depth": null}}})", kJson), expected);
  EXPECT_EQ(parse_config("parallel = dict(tensor=dict(size=4, mode=None, depth=None))", kPython), expected);
  EXPECT_EQ(parse_config("parallel = dict(tensor=dict(size=4, mode='None'))", kPython), expected);
}

TEST(ConfigParallelSettings, OtherTopLevelEntriesOfAPythonConfigAreIgnoredWhateverTheirShape) {
  // A TOML or JSON file holds pgroups' settings alone (silent_defaults_test.cpp).
  EXPECT_EQ(parse_config("optimizer = dict(lr=1e-3, betas=[0.9, 0.99], name=None)\n"
                         "big = 123456789012345678901234567890\n"
                         "parallel = dict(pipeline=4)\n",
                         kPython),
            make_config(4, 1, TensorMode::none));
}

TEST(ConfigParallelSettings, LayoutRulesAreLeftToLayout) {
  // Not a square, a negative size, a depth with mode 2d: Layout rejects these, not readers.
  ParallelConfig expected = make_config(-2, 8, TensorMode::tensor_2d, 3);
  expected.world_size = 0;
  EXPECT_EQ(parse_config("[parallel]\npipeline = -2\ntensor = { size = 8, mode = \"2d\", depth = 3 }\n", kToml),
            expected);
}

TEST(ConfigParallelSettings, UnknownKeySuggestsTheClosestKnownOne) {
  EXPECT_EQ(parse_error("[parallel]\npipline = 2\n", kToml),
            "<config>:2:1: unknown key 'pipline' in parallel; the keys are pipeline, tensor, world_size, "
            "legacy_sequence_dp, seed, gpus_per_node, rank_map (did you mean pipeline?)");
  EXPECT_EQ(parse_error(R"({"parallel": {"pipline": 2}})", kJson),
            "<config>:1:15: unknown key 'pipline' in parallel; the keys are pipeline, tensor, world_size, "
            "legacy_sequence_dp, seed, gpus_per_node, rank_map (did you mean pipeline?)");
  EXPECT_EQ(parse_error("parallel = dict(pipline=2)", kPython),
            "<config>:1:17: unknown key 'pipline' in parallel; the keys are pipeline, tensor, world_size, "
            "legacy_sequence_dp, seed, gpus_per_node, rank_map (did you mean pipeline?)");
}

TEST(ConfigParallelSettings, UnknownKeyWithNothingCloseListsTheKeysOnly) {
  EXPECT_EQ(parse_error("parallel = dict(zero=1)", kPython),
            "<config>:1:17: unknown key 'zero' in parallel; the keys are pipeline, tensor, world_size, "
            "legacy_sequence_dp, seed, gpus_per_node, rank_map");
}

TEST(ConfigParallelSettings, UnknownKeyInsideTensorAndPipelineTables) {
  EXPECT_EQ(
      parse_error("[parallel]\ntensor = { size = 4, modes = \"2d\" }\n", kToml),
      "<config>:2:22: unknown key 'modes' in parallel.tensor; the keys are size, mode, depth (did you mean mode?)");
  EXPECT_EQ(parse_error(R"({"parallel": {"pipeline": {"sise": 2}}})", kJson),
            "<config>:1:28: unknown key 'sise' in parallel.pipeline; the only key is size (did you mean size?)");
  EXPECT_EQ(parse_error("parallel = dict(tensor=dict(size=4, mode='2d', dpeth=2))", kPython),
            "<config>:1:48: unknown key 'dpeth' in parallel.tensor; the keys are size, mode, depth");
}

TEST(ConfigParallelSettings, WrongTypeNamesKeyExpectedAndFoundInTheFormatsWords) {
  EXPECT_EQ(parse_error("[parallel]\npipeline = \"2\"\n", kToml),
            "<config>:2:12: parallel.pipeline must be an integer or a table, found string \"2\"");
  EXPECT_EQ(parse_error(R"({"parallel": {"pipeline": "2"}})", kJson),
            "<config>:1:27: parallel.pipeline must be an integer or an object, found string \"2\"");
  EXPECT_EQ(parse_error("parallel = dict(pipeline='2')", kPython),
            "<config>:1:26: parallel.pipeline must be an integer or a dict, found string '2'");
}

TEST(ConfigParallelSettings, FloatWhereAnIntegerIsExpectedIsRejected) {
  EXPECT_EQ(parse_error("[parallel]\ntensor = { size = 4.0 }\n", kToml),
            "<config>:2:19: parallel.tensor.size must be an integer, found float 4.0");
  EXPECT_EQ(parse_error(R"({"parallel": {"tensor": {"size": 4.0}}})", kJson),
            "<config>:1:34: parallel.tensor.size must be an integer, found float 4.0");
  EXPECT_EQ(parse_error("parallel = dict(tensor=dict(size=4.0))", kPython),
            "<config>:1:34: parallel.tensor.size must be an integer, found float 4.0");
  EXPECT_EQ(parse_error("parallel = dict(pipeline=-2.5e1)", kPython),
            "<config>:1:26: parallel.pipeline must be an integer or a dict, found float -2.5e1");
}

TEST(ConfigParallelSettings, BooleanIsNotAnIntegerNorAnIntegerABoolean) {
  EXPECT_EQ(parse_error("parallel = dict(world_size=True)", kPython),
            "<config>:1:28: parallel.world_size must be an integer, found boolean True");
  EXPECT_EQ(parse_error(R"({"parallel": {"legacy_sequence_dp": 1}})", kJson),
            "<config>:1:37: parallel.legacy_sequence_dp must be a boolean, found integer 1");
  EXPECT_EQ(parse_error("[parallel]\nseed = false\n", kToml),
            "<config>:2:8: parallel.seed must be an integer, found boolean false");
}

TEST(ConfigParallelSettings, ModeMustBeAStringOrNull) {
  EXPECT_EQ(parse_error("[parallel]\ntensor = { mode = 2 }\n", kToml),
            "<config>:2:19: parallel.tensor.mode must be a string, found integer 2");
  EXPECT_EQ(parse_error(R"({"parallel": {"tensor": {"mode": ["2d"]}}})", kJson),
            "<config>:1:34: parallel.tensor.mode must be a string or null, found array");
  EXPECT_EQ(parse_error("parallel = dict(tensor=dict(mode=dict()))", kPython),
            "<config>:1:34: parallel.tensor.mode must be a string or None, found dict");
}

TEST(ConfigParallelSettings, DepthMustBeAnIntegerOrNull) {
  EXPECT_EQ(parse_error(R"({"parallel": {"tensor": {"depth": "2"}}})", kJson),
            "<config>:1:35: parallel.tensor.depth must be an integer or null, found string \"2\"");
  EXPECT_EQ(parse_error("[parallel]\ntensor = { depth = 1979-05-27 }\n", kToml),
            "<config>:2:20: parallel.tensor.depth must be an integer, found date-time");
}

TEST(ConfigParallelSettings, ParallelAndTensorMustBeTables) {
  EXPECT_EQ(parse_error("parallel = 4", kPython), "<config>:1:12: parallel must be a dict, found integer 4");
  EXPECT_EQ(parse_error(R"({"parallel": null})", kJson), "<config>:1:14: parallel must be an object, found null");
  EXPECT_EQ(parse_error("[parallel]\ntensor = [4]\n", kToml),
            "<config>:2:10: parallel.tensor must be an integer or a table, found array");
  EXPECT_EQ(parse_error("parallel = dict(tensor=[4])", kPython),
            "<config>:1:24: parallel.tensor must be an integer or a dict, found list");
}

TEST(ConfigParallelSettings, JsonTopLevelMustBeAnObject) {
  EXPECT_EQ(parse_error("[1, 2]", kJson), "<config>:1:1: the top level must be an object, found array");
  EXPECT_EQ(parse_error(" \"parallel\"", kJson),
            "<config>:1:2: the top level must be an object, found string \"parallel\"");
}

TEST(ConfigParallelSettings, UnknownModeIsAConfigErrorWithItsPositionAndASuggestion) {
  EXPECT_EQ(config_error("[parallel]\ntensor = { size = 4, mode = \"2D\" }\n", kToml),
            "<config>:2:29: unknown tensor mode '2D'; the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence "
            "(did you mean 2d?)");
  EXPECT_EQ(config_error(R"({"parallel": {"tensor": {"mode": "4d"}}})", kJson),
            "<config>:1:34: unknown tensor mode '4d'; the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence");
  EXPECT_EQ(config_error("parallel = dict(tensor=dict(mode='Sequence'))", kPython),
            "<config>:1:34: unknown tensor mode 'Sequence'; the mode must be one of none, 1d, 2d, 2.5d, 3d, "
            "sequence (did you mean sequence?)");
}

TEST(ConfigParallelSettings, HostileModeStringIsShownEscapedAndCut) {
  // An escape sequence that clears the screen, then a thousand characters.
  EXPECT_EQ(config_error("parallel = dict(tensor=dict(mode='\\x1b[2J" + std::string(1000, 'x') + "'))", kPython),
            "<config>:1:34: unknown tensor mode '\\x1b[2J" + std::string(36, 'x') +
                "'...; the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence");
}

TEST(ConfigParallelSettings, IntegerBeyondSixtyFourBitsIsRejectedNamingIt) {
  EXPECT_EQ(parse_error(R"({"parallel": {"pipeline": 99999999999999999999}})", kJson),
            "<config>:1:27: parallel.pipeline 99999999999999999999 does not fit in a 64-bit integer");
  EXPECT_EQ(parse_error(R"({"parallel": {"seed": 9223372036854775808}})", kJson),
            "<config>:1:23: parallel.seed 9223372036854775808 does not fit in a 64-bit integer");
  EXPECT_EQ(parse_error("parallel = dict(tensor=dict(size=-9223372036854775809))", kPython),
            "<config>:1:34: parallel.tensor.size -9223372036854775809 does not fit in a 64-bit integer");
  // toml++ rejects it itself, at the end of the number.
  EXPECT_EQ(parse_error("[parallel]\npipeline = 99999999999999999999\n", kToml),
            "<config>:2:32: error while parsing decimal integer: '99999999999999999999' is not representable in "
            "64 bits");
}

TEST(ConfigParallelSettings, SixtyFourBitExtremesAreRead) {
  ParallelConfig expected;
  expected.seed = std::numeric_limits<std::int64_t>::min();
  expected.world_size = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(parse_config("parallel = dict(seed=-9223372036854775808, world_size=9_223_372_036_854_775_807)", kPython),
            expected);
  EXPECT_EQ(parse_config(R"({"parallel": {"seed": -9223372036854775808, "world_size": 9223372036854775807}})", kJson),
            expected);
  EXPECT_EQ(parse_config("[parallel]\nseed = -9223372036854775808\nworld_size = 9223372036854775807\n", kToml),
            expected);
}

TEST(ConfigParallelSettings, DuplicateKeyIsRejectedWithBothPositions) {
  EXPECT_EQ(parse_error(R"({"parallel": {"pipeline": 2, "pipeline": 4}})", kJson),
            "<config>:1:30: duplicate key 'pipeline' in parallel (first at line 1, column 15)");
  EXPECT_EQ(parse_error("parallel = dict(tensor=dict(size=4, size=8))", kPython),
            "<config>:1:37: duplicate key 'size' in parallel.tensor (first at line 1, column 29)");
  EXPECT_EQ(parse_error("parallel = dict(pipeline=2)\nparallel = dict(pipeline=4)\n", kPython),
            "<config>:2:1: duplicate key 'parallel' (first at line 1, column 1)");
}

TEST(ConfigParallelSettings, TableOfMillionsOfKeysIsRejectedAtTheFirstUnknownOne) {
  std::string text = "{\"parallel\": {\"pipeline\": 2";
  for (int i = 0; i < 200000; ++i) text += ",\"k" + std::to_string(i) + "\": 1";
  text += "}}";
  EXPECT_EQ(parse_error(text, kJson),
            "<config>:1:29: unknown key 'k0' in parallel; the keys are pipeline, tensor, world_size, "
            "legacy_sequence_dp, seed, gpus_per_node, rank_map");
}

TEST(ConfigParallelSettings, MessagesNameTheSourceGiven) {
  EXPECT_EQ(
      test::message_of<ParseError>([] { (void)parse_config("parallel = dict(pipeline='2')", kPython, "train.py"); }),
      "train.py:1:26: parallel.pipeline must be an integer or a dict, found string '2'");
}

}  // namespace
}  // namespace pgroups
