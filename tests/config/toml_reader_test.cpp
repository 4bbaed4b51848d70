// TOML configurations, read through toml++ after a nesting pre-scan.

#include <gtest/gtest.h>

#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"

namespace pgroups {
namespace {

using test::make_config;

ParallelConfig read_toml(std::string_view text) { return parse_config(text, ConfigFormat::toml); }
std::string rejection(std::string_view text) { return test::parse_error(text, ConfigFormat::toml); }

TEST(TomlConfigReader, DottedKeysSubTablesAndInlineTablesAreEquivalent) {
  const ParallelConfig expected = make_config(2, 8, TensorMode::tensor_2p5d, 2);
  EXPECT_EQ(read_toml("parallel.pipeline = 2\nparallel.tensor = { size = 8, mode = \"2.5d\", depth = 2 }\n"), expected);
  EXPECT_EQ(read_toml("[parallel]\npipeline.size = 2\n[parallel.tensor]\nsize = 8\nmode = '2.5d'\ndepth = 2\n"),
            expected);
  EXPECT_EQ(read_toml("parallel = { pipeline = { size = 2 }, tensor = { size = 8, mode = \"2.5d\", depth = 2 } }\n"),
            expected);
}

TEST(TomlConfigReader, BracketsInsideStringsAndCommentsDoNotCountAsNesting) {
  const std::string brackets(200, '[');
  std::string text;
  text += "# " + brackets + "\n";
  text += "a = \"" + brackets + "\"\n";
  text += "b = '" + brackets + "'\n";
  // An escaped quote, quotes inside, and two more that belong to the content.
  text += "c = \"\"\"\n" + brackets + "\\\"\"\" and \"\"quotes\"\"\"\"\n";
  text += "d = '''" + brackets + "\n" + brackets + "'''\n";
  text += "e = \"" + std::string(200, '.') + "\"\n";
  // Dots in values are not dotted keys, however many.
  text += "f = [";
  for (int i = 0; i < 100; ++i) text += std::to_string(i) + ".5, ";
  text += "0.5]\n";
  text += "[parallel]\npipeline = 3\n";
  // Past the nesting scan: the first error is the reader's, naming the first top-level key.
  EXPECT_EQ(rejection(text),
            "<config>:2:1: unknown top-level key 'a': a TOML configuration holds parallel, mesh and cluster only; a "
            "training run's other settings belong in a file of their own");
}

TEST(TomlConfigReader, ArrayOfTablesIsNotAParallelTable) {
  EXPECT_EQ(rejection("[[parallel]]\npipeline = 2\n"), "<config>:1:1: parallel must be a table, found array");
}

TEST(TomlConfigReader, SyntaxErrorIsReportedWithItsPosition) {
  EXPECT_EQ(rejection("[parallel]\npipeline = = 2\n"),
            "<config>:2:12: error while parsing value: could not determine value type");
  EXPECT_EQ(rejection("[parallel\npipeline = 2\n"),
            "<config>:1:10: error while parsing table header: expected ']', saw '\\n'");
}

TEST(TomlConfigReader, UnterminatedStringIsReportedWithItsPosition) {
  EXPECT_EQ(rejection("[parallel]\ntensor = { mode = \"2d }\n"),
            "<config>:2:24: error while parsing string: unescaped control characters other than TAB (U+0009) are "
            "explicitly prohibited");
}

TEST(TomlConfigReader, DuplicateKeyIsRejectedByToml) {
  EXPECT_EQ(rejection("[parallel]\npipeline = 2\npipeline = 4\n"),
            "<config>:3:12: error while parsing key-value pair: cannot redefine existing integer 'pipeline'");
}

}  // namespace
}  // namespace pgroups
