// No silent defaults: a misspelt `parallel`, a size-less table and a Python line ended by
// a lone carriage return are read as the user meant or rejected with a suggestion, in
// every format, never turned into the default layout.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "pgroups/config/config_reader.hpp"
#include "pgroups/layout/error.hpp"
#include "reader_test_helpers.hpp"

namespace pgroups {
namespace {

using test::make_config;
using test::parse_error;

std::string misspelt(std::string_view key) {
  return fmt::format("unknown top-level key '{}': the settings are read from parallel (and mesh) only, and without "
                     "parallel the defaults would be used (did you mean parallel?)",
                     key);
}

TEST(ConfigSilentDefaults, MisspeltParallelIsAnErrorWithASuggestionInEveryFormat) {
  EXPECT_EQ(parse_error("[parallell]\npipeline = 2\n", kToml), "<config>:1:2: " + misspelt("parallell"));
  EXPECT_EQ(parse_error("title = 'x'\nparalel = { pipeline = 2 }\n", kToml), "<config>:2:1: " + misspelt("paralel"));
  EXPECT_EQ(parse_error("Parallel.pipeline = 2\n", kToml), "<config>:1:1: " + misspelt("Parallel"));
  EXPECT_EQ(parse_error(R"({"paralel": {"pipeline": 2}})", kJson), "<config>:1:2: " + misspelt("paralel"));
  EXPECT_EQ(parse_error(R"({"model": {}, "PARALLEL": {"pipeline": 2}})", kJson),
            "<config>:1:15: " + misspelt("PARALLEL"));
  EXPECT_EQ(parse_error("paralel = dict(pipeline=2)\n", kPython), "<config>:1:1: " + misspelt("paralel"));
  EXPECT_EQ(parse_error("BATCH = 8\nparallell = dict(tensor=dict(size=4, mode='2d'))\n", kPython),
            "<config>:2:1: " + misspelt("parallell"));
}

TEST(ConfigSilentDefaults, AMisspellingBesideTheRealTableAndUnrelatedKeysAreIgnored) {
  EXPECT_EQ(parse_config("[parallel]\npipeline = 2\n[parallels]\nx = 1\n", kToml), make_config(2, 1, TensorMode::none));
  EXPECT_EQ(parse_config(R"({"parallels": 1, "parallel": {"pipeline": 2}})", kJson),
            make_config(2, 1, TensorMode::none));
  EXPECT_EQ(parse_config("paralel = 1\nparallel = dict(pipeline=2)\n", kPython), make_config(2, 1, TensorMode::none));
  // Nothing close to `parallel`: a training config without parallel settings.
  EXPECT_EQ(parse_config("[model]\nlayers = 4\n[optimizer]\nlr = 0.1\n", kToml), ParallelConfig{});
  EXPECT_EQ(parse_config(R"({"model": {"layers": 4}, "pipeline": 2})", kJson), ParallelConfig{});
  EXPECT_EQ(parse_config("NUM_EPOCHS = 2\nmodel = dict(layers=4)\n", kPython), ParallelConfig{});
}

TEST(ConfigSilentDefaults, AMeshTableIsNoMisspellingOfParallelButAMisspellingBesideItIsAnError) {
  const ParallelConfig toml = parse_config("[mesh]\norder = \"tp-dp\"\ntp = 2\ndp = 2\n", kToml);
  ASSERT_TRUE(toml.mesh.has_value());
  EXPECT_EQ(toml.mesh->dims, (std::vector<MeshDim>{{"tp", 2}, {"dp", 2}}));
  EXPECT_EQ(parse_config(R"({"mesh": {"order": "tp-dp", "tp": 2, "dp": 2}})", kJson), toml);
  EXPECT_EQ(parse_config("mesh = dict(order='tp-dp', tp=2, dp=2)\n", kPython), toml);
  EXPECT_EQ(parse_error("[mesh]\norder = \"tp-dp\"\ntp = 2\n[paralel]\nworld_size = 4\n", kToml),
            "<config>:4:2: " + misspelt("paralel"));
  EXPECT_EQ(parse_error(R"({"mesh": {"order": "tp", "tp": 2}, "Parallel": {"world_size": 2}})", kJson),
            "<config>:1:36: " + misspelt("Parallel"));
  EXPECT_EQ(parse_error("mesh = dict(order='tp', tp=2)\nparallell = dict(world_size=2)\n", kPython),
            "<config>:2:1: " + misspelt("parallell"));
}

TEST(ConfigSilentDefaults, TensorTableWithoutSizeIsAnErrorNamingTheRule) {
  const std::string rule = "parallel.tensor has no size: a tensor {} must give its size (size = N)";
  EXPECT_EQ(parse_error("[parallel]\ntensor = {}\n", kToml), "<config>:2:10: " + fmt::format(fmt::runtime(rule), "table"));
  EXPECT_EQ(parse_error("[parallel]\ntensor = { mode = \"2d\" }\n", kToml),
            "<config>:2:10: " + fmt::format(fmt::runtime(rule), "table"));
  EXPECT_EQ(parse_error("[parallel.tensor]\nmode = \"1d\"\n", kToml),
            "<config>:1:1: " + fmt::format(fmt::runtime(rule), "table"));
  EXPECT_EQ(parse_error(R"({"parallel": {"tensor": {}}})", kJson),
            "<config>:1:25: " + fmt::format(fmt::runtime(rule), "object"));
  EXPECT_EQ(parse_error(R"({"parallel": {"tensor": {"mode": "2d", "depth": null}}})", kJson),
            "<config>:1:25: " + fmt::format(fmt::runtime(rule), "object"));
  EXPECT_EQ(parse_error("parallel = dict(tensor=dict())", kPython),
            "<config>:1:24: " + fmt::format(fmt::runtime(rule), "dict"));
  EXPECT_EQ(parse_error("parallel = dict(tensor={'mode': '2d'})", kPython),
            "<config>:1:24: " + fmt::format(fmt::runtime(rule), "dict"));
}

TEST(ConfigSilentDefaults, PipelineTableWithoutSizeIsAnErrorToo) {
  EXPECT_EQ(parse_error("[parallel]\npipeline = {}\n", kToml),
            "<config>:2:12: parallel.pipeline has no size: a pipeline table must give its size (size = N)");
  EXPECT_EQ(parse_error(R"({"parallel": {"pipeline": {}}})", kJson),
            "<config>:1:27: parallel.pipeline has no size: a pipeline object must give its size (size = N)");
  EXPECT_EQ(parse_error("parallel = dict(pipeline=dict())", kPython),
            "<config>:1:26: parallel.pipeline has no size: a pipeline dict must give its size (size = N)");
}

TEST(ConfigSilentDefaults, PythonEndsALineAtALoneCarriageReturn) {
  EXPECT_EQ(parse_config("a=1\rparallel=dict(pipeline=2)", kPython), make_config(2, 1, TensorMode::none));
  EXPECT_EQ(parse_config("a = 1\r\rparallel = dict(pipeline=3)\r", kPython), make_config(3, 1, TensorMode::none));
  EXPECT_EQ(parse_config("# a comment\rparallel = dict(pipeline=4)", kPython), make_config(4, 1, TensorMode::none));
  EXPECT_EQ(parse_config("x = '''a\rb'''\rparallel = dict(\r  pipeline=2,\r  tensor=4)\r", kPython),
            make_config(2, 4, TensorMode::none));
  EXPECT_EQ(parse_config("parallel = dict(pipeline=2, \\\r tensor=4)", kPython), make_config(2, 4, TensorMode::none));
  EXPECT_EQ(parse_config("a = 1\r\nparallel = dict(pipeline=2)\r\n", kPython), make_config(2, 1, TensorMode::none));
  // Lines count as Python counts them: the CR ends line 1.
  EXPECT_EQ(parse_error("x = 1\rimport os\r", kPython),
            "<config>:2:1: 'import' is not allowed (a Python config is read as literals, never executed)");
  EXPECT_EQ(parse_error("x = 1\r\n\ry = 'abc\r'", kPython), "<config>:3:5: unterminated string");
  // A statement cannot continue past a lone CR any more than past a newline.
  EXPECT_EQ(parse_error("parallel = \rdict(pipeline=2)", kPython), "<config>:1:12: expected a value, found end of line");
}

}  // namespace
}  // namespace pgroups
