// TOML configurations, read through toml++ after a nesting pre-scan.

#include <gtest/gtest.h>

#include <string>

#include "pgroups/config_reader.hpp"
#include "pgroups/error.hpp"
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
  EXPECT_EQ(read_toml("# " + brackets + "\n"
                      "a = \"" + brackets + "\"\n"
                      "b = '" + brackets + "'\n"
                      "c = \"\"\"\n" + brackets + "\\\"\"\" and \"\"quotes\"\"\"\"\n"
                      "d = '''" + brackets + "\n" + brackets + "'''\n"
                      "e = \"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c\"\n"
                      "f = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5,"
                      " 18.5, 19.5, 20.5, 21.5, 22.5, 23.5, 24.5, 25.5, 26.5, 27.5, 28.5, 29.5, 30.5, 31.5, 32.5, 33.5,"
                      " 34.5, 35.5, 36.5, 37.5, 38.5, 39.5, 40.5, 41.5, 42.5, 43.5, 44.5, 45.5, 46.5, 47.5, 48.5, 49.5,"
                      " 50.5, 51.5, 52.5, 53.5, 54.5, 55.5, 56.5, 57.5, 58.5, 59.5, 60.5, 61.5, 62.5, 63.5, 64.5, 65.5]\n"
                      "[parallel]\npipeline = 3\n"),
            make_config(3, 1, TensorMode::none));
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
