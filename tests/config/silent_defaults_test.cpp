// No silent defaults: a misspelt `parallel`, a size-less table and a Python line ended by
// a lone carriage return are read as the user meant or rejected with a suggestion, in
// every format, never turned into the default layout.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"

namespace pgroups {
namespace {

using test::make_config;
using test::parse_error;

// A .py config keeps a training run's other keys, so only a misspelt parallel is refused there.
std::string misspelt(std::string_view key) {
  return fmt::format(
      "unknown top-level key '{}': the settings are read from parallel (and mesh) only, and without "
      "parallel the defaults would be used (did you mean parallel?)",
      key);
}

// A TOML or JSON file holds pgroups' settings alone, so any other top-level key is refused.
std::string unknown(std::string_view key, std::string_view format, std::string_view hint) {
  return fmt::format("unknown top-level key '{}': a {} configuration holds parallel, mesh and cluster only{}", key,
                     format, hint);
}
constexpr std::string_view kDidYouMean = " (did you mean parallel?)";
constexpr std::string_view kOtherSettings = "; a training run's other settings belong in a file of their own";

TEST(ConfigSilentDefaults, MisspeltParallelIsAnErrorWithASuggestionInEveryFormat) {
  EXPECT_EQ(parse_error("[parallell]\npipeline = 2\n", kToml),
            "<config>:1:2: " + unknown("parallell", "TOML", kDidYouMean));
  EXPECT_EQ(parse_error("paralel = { pipeline = 2 }\n", kToml),
            "<config>:1:1: " + unknown("paralel", "TOML", kDidYouMean));
  EXPECT_EQ(parse_error("Parallel.pipeline = 2\n", kToml), "<config>:1:1: " + unknown("Parallel", "TOML", kDidYouMean));
  EXPECT_EQ(parse_error(R"({"paralel": {"pipeline": 2}})", kJson),
            "<config>:1:2: " + unknown("paralel", "JSON", kDidYouMean));
  EXPECT_EQ(parse_error(R"({"PARALLEL": {"pipeline": 2}})", kJson),
            "<config>:1:2: " + unknown("PARALLEL", "JSON", kDidYouMean));
  EXPECT_EQ(parse_error("paralel = dict(pipeline=2)\n", kPython), "<config>:1:1: " + misspelt("paralel"));
  EXPECT_EQ(parse_error("BATCH = 8\nparallell = dict(tensor=dict(size=4, mode='2d'))\n", kPython),
            "<config>:2:1: " + misspelt("parallell"));
}

TEST(ConfigSilentDefaults, AnUnknownTopLevelKeyOfATomlOrJsonFileIsAnErrorNamingTheFirstInTheFile) {
  // Written above [parallel], a TOML key is a top-level key: read as nothing before.
  for (const std::string key : {"world_size", "gpus_per_node", "legacy_sequence_dp"}) {
    const std::string value = key == "legacy_sequence_dp" ? "true" : "8";
    EXPECT_EQ(parse_error(key + " = " + value + "\n[parallel]\npipeline = 2\n", kToml),
              "<config>:1:1: " + unknown(key, "TOML",
                                         fmt::format("; {} is a setting of parallel: write it under [parallel] (or "
                                                     "as parallel.{})",
                                                     key, key)));
    EXPECT_EQ(parse_error(fmt::format(R"({{"parallel": {{"pipeline": 2}}, "{}": {}}})", key, value), kJson),
              "<config>:1:31: " + unknown(key, "JSON",
                                          fmt::format("; {} is a setting of parallel: move it into the \"parallel\" "
                                                      "object",
                                                      key)));
  }
  // The first in source order, whatever toml++'s own order (by name) or the values' shapes.
  EXPECT_EQ(parse_error("[parallel]\npipeline = 2\n[zeta]\nx = 1\n[alpha]\nstart = 1979-05-27T07:32:00Z\n", kToml),
            "<config>:3:2: " + unknown("zeta", "TOML", kOtherSettings));
  EXPECT_EQ(parse_error("[parallel]\npipeline = 2\n[parallels]\nx = 1\n", kToml),
            "<config>:3:2: " + unknown("parallels", "TOML", kDidYouMean));
  EXPECT_EQ(parse_error(R"({"optimizer": {"lr": 1e-3, "name": null}, "big": 123456789012345678901234567890,
                            "parallel": {"pipeline": 4}})",
                        kJson),
            "<config>:1:2: " + unknown("optimizer", "JSON", kOtherSettings));
  EXPECT_EQ(parse_error(R"({"meshes": {"order": "tp"}})", kJson),
            "<config>:1:2: " + unknown("meshes", "JSON", " (did you mean mesh?)"));
  // An error inside parallel that comes first in the file is the one named.
  EXPECT_EQ(parse_error("[parallel]\npipline = 2\n[model]\nx = 1\n", kToml).substr(0, 43),
            "<config>:2:1: unknown key 'pipline' in para");
}

TEST(ConfigSilentDefaults, APythonConfigKeepsItsOtherKeysBesideTheRealTable) {
  EXPECT_EQ(parse_config("paralel = 1\nparallel = dict(pipeline=2)\n", kPython), make_config(2, 1, TensorMode::none));
  // Nothing close to `parallel`: a training config without parallel settings.
  EXPECT_EQ(parse_config("NUM_EPOCHS = 2\nmodel = dict(layers=4)\n", kPython), ParallelConfig{});
  EXPECT_EQ(parse_config("optimizer = dict(lr=1e-3, betas=[0.9, 0.99], name=None)\n"
                         "big = 123456789012345678901234567890\nworld_size = 'x'\nparallel = dict(pipeline=4)\n",
                         kPython),
            make_config(4, 1, TensorMode::none));
}

TEST(ConfigSilentDefaults, AMeshTableIsNoMisspellingOfParallelButAMisspellingBesideItIsAnError) {
  const ParallelConfig toml = parse_config("[mesh]\norder = \"tp-dp\"\ntp = 2\ndp = 2\n", kToml);
  ASSERT_TRUE(toml.mesh.has_value());
  EXPECT_EQ(toml.mesh->dims, (std::vector<MeshDim>{{"tp", 2}, {"dp", 2}}));
  EXPECT_EQ(parse_config(R"({"mesh": {"order": "tp-dp", "tp": 2, "dp": 2}})", kJson), toml);
  EXPECT_EQ(parse_config("mesh = dict(order='tp-dp', tp=2, dp=2)\n", kPython), toml);
  EXPECT_EQ(parse_error("[mesh]\norder = \"tp-dp\"\ntp = 2\n[paralel]\nworld_size = 4\n", kToml),
            "<config>:4:2: " + unknown("paralel", "TOML", kDidYouMean));
  EXPECT_EQ(parse_error(R"({"mesh": {"order": "tp", "tp": 2}, "Parallel": {"world_size": 2}})", kJson),
            "<config>:1:36: " + unknown("Parallel", "JSON", kDidYouMean));
  EXPECT_EQ(parse_error("mesh = dict(order='tp', tp=2)\nparallell = dict(world_size=2)\n", kPython),
            "<config>:2:1: " + misspelt("parallell"));
}

TEST(ConfigSilentDefaults, TensorTableWithoutSizeIsAnErrorNamingTheRule) {
  const std::string rule = "parallel.tensor has no size: a tensor {} must give its size (size = N)";
  EXPECT_EQ(parse_error("[parallel]\ntensor = {}\n", kToml),
            "<config>:2:10: " + fmt::format(fmt::runtime(rule), "table"));
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
  EXPECT_EQ(parse_error("parallel = \rdict(pipeline=2)", kPython),
            "<config>:1:12: expected a value, found end of line");
}

}  // namespace
}  // namespace pgroups
