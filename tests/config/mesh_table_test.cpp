// The [mesh] table: the same MeshConfig from TOML, JSON and Python, and located messages
// for every way it can be wrong.

#include <gtest/gtest.h>

#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"

namespace pgroups {
namespace {

const MeshConfig kExpected{{{"tp", 2}, {"cp", 1}, {"dp", 4}, {"pp", 2}}, {"tp", "dp-cp", "embd"}};

TEST(MeshTable, TomlJsonAndPythonGiveTheSameMesh) {
  const ParallelConfig toml =
      parse_config("[mesh]\norder = \"tp-cp-dp-pp\"\ntp = 2\ndp = 4\npp = 2\ngroups = [\"tp\", \"dp-cp\", \"embd\"]\n",
                   ConfigFormat::toml);
  const ParallelConfig json = parse_config(
      R"({"mesh": {"order": "tp-cp-dp-pp", "tp": 2, "dp": 4, "pp": 2, "groups": ["tp", "dp-cp", "embd"]}})",
      ConfigFormat::json);
  const ParallelConfig python = parse_config(
      "mesh = dict(order='tp-cp-dp-pp', tp=2, dp=4, pp=2, groups=['tp', 'dp-cp', 'embd'])\n", ConfigFormat::python);
  ASSERT_TRUE(toml.mesh.has_value());
  EXPECT_EQ(*toml.mesh, kExpected);
  EXPECT_EQ(json, toml);
  EXPECT_EQ(python, toml);
  EXPECT_EQ(toml.pipeline, 1);  // the presets keep their defaults
}

TEST(MeshTable, SizesOfNamesMissingFromTheOrderMayBeOneAndGroupsMayBeOmitted) {
  const ParallelConfig config = parse_config(
      "[mesh]\norder = \"dp-tp\"\ntp = 2\nep = 1\ndp = 3\n[parallel]\nworld_size = 6\n", ConfigFormat::toml);
  ASSERT_TRUE(config.mesh.has_value());
  EXPECT_EQ(config.mesh->dims, (std::vector<MeshDim>{{"dp", 3}, {"tp", 2}}));
  EXPECT_TRUE(config.mesh->groups.empty());
  EXPECT_EQ(config.world_size, 6);
}

TEST(MeshTable, OtherTopLevelEntriesAreIgnoredInPythonAndRefusedInToml) {
  const ParallelConfig config = parse_config(
      "data = [1, 2, [3, 4]]\nmodel = dict(layers=['a'])\n"
      "mesh = dict(order='tp', tp=2)\n",
      ConfigFormat::python);
  ASSERT_TRUE(config.mesh.has_value());
  EXPECT_EQ(config.mesh->dims, (std::vector<MeshDim>{{"tp", 2}}));
  EXPECT_EQ(test::parse_error("[mesh]\norder = \"tp\"\ntp = 2\n[model]\nlayers = [\"a\"]\n", ConfigFormat::toml),
            "<config>:4:2: unknown top-level key 'model': a TOML configuration holds parallel, mesh and cluster only; "
            "a training run's other settings belong in a file of their own");
}

TEST(MeshTable, WrongTypesAreParseErrorsInTheFormatsOwnWords) {
  EXPECT_EQ(test::parse_error("[mesh]\ntp = 2\n", ConfigFormat::toml),
            "<config>:1:1: mesh needs an order, the dimension names fastest first: order = \"tp-dp-pp\"");
  EXPECT_EQ(test::parse_error("mesh = 3\n", ConfigFormat::toml), "<config>:1:8: mesh must be a table, found integer 3");
  EXPECT_EQ(test::parse_error("[mesh]\norder = 3\n", ConfigFormat::toml),
            "<config>:2:9: mesh.order must be a string, found integer 3");
  EXPECT_EQ(test::parse_error("[mesh]\norder = \"tp\"\ngroups = \"tp\"\n", ConfigFormat::toml),
            "<config>:3:10: mesh.groups must be an array of strings, found string \"tp\"");
  EXPECT_EQ(test::parse_error("mesh = dict(order='tp', groups='tp')\n", ConfigFormat::python),
            "<config>:1:32: mesh.groups must be a list of strings, found string 'tp'");
  EXPECT_EQ(test::parse_error(R"({"mesh": {"order": "tp", "groups": ["tp", 2]}})", ConfigFormat::json),
            "<config>:1:43: mesh.groups[1] must be a string, found integer 2");
  EXPECT_EQ(test::parse_error("[mesh]\noder = \"tp-dp\"\n", ConfigFormat::toml),
            "<config>:2:8: mesh.oder must be an integer (the size of dimension 'oder'), found string \"tp-dp\"; the "
            "other keys of mesh are order and groups (did you mean order?)");
  EXPECT_EQ(test::parse_error(R"({"mesh": {"order": "tp", "tp": 99999999999999999999}})", ConfigFormat::json),
            "<config>:1:32: mesh.tp 99999999999999999999 does not fit in a 64-bit integer");
}

TEST(MeshTable, TooManyGroupsAreRejectedNotDropped) {
  std::string groups;
  for (int i = 0; i < 70; ++i) groups += std::string(groups.empty() ? "" : ", ") + "\"tp\"";
  EXPECT_EQ(test::parse_error("[mesh]\norder = \"tp\"\ngroups = [" + groups + "]\n", ConfigFormat::toml),
            "<config>:3:10: mesh.groups has 70 entries; at most 64 are allowed");
}

TEST(MeshTable, ASizeForANameMissingFromTheOrderIsAConfigErrorAtTheOrder) {
  EXPECT_EQ(test::config_error("[mesh]\norder = \"tp-dp\"\npp = 2\n", ConfigFormat::toml),
            "<config>:2:9: size pp=2 is given, but 'pp' is not in the order 'tp-dp'; a name missing from the order "
            "must have size 1");
}

}  // namespace
}  // namespace pgroups
