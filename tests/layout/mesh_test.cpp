#include "pgroups/layout/mesh.hpp"

#include <gtest/gtest.h>

#include "pgroups/common/error.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

TEST(Mesh, FirstDimensionVariesFastest) {
  const Mesh mesh({{"x", 2}, {"y", 3}});
  EXPECT_EQ(mesh.size(), 6);
  EXPECT_EQ(mesh.coordinates(5), (std::vector<std::int64_t>{1, 2}));
  const std::vector<std::int64_t> coords{1, 2};
  EXPECT_EQ(mesh.rank_of(coords), 5);
}

TEST(Mesh, GroupVaryingOneDimensionHoldsItsStride) {
  const Mesh mesh({{"x", 2}, {"y", 3}, {"z", 2}});
  const DimMask y = mesh.mask_of({"y"});
  EXPECT_EQ(mesh.group_of(7, y), (std::vector<std::int64_t>{7, 9, 11}));
  EXPECT_EQ(mesh.local_rank(8, y), 1);
  EXPECT_EQ(mesh.group_index(8, y), 2);  // leaders 0, 1, 6, 7
  EXPECT_EQ(mesh.group_leader(2, y), 6);
  EXPECT_EQ(mesh.group_member(7, y, 2), 11);
}

TEST(Mesh, GroupsAreOrderedByFirstRank) {
  const Mesh mesh({{"x", 2}, {"y", 2}});
  EXPECT_EQ(mesh.groups(mesh.mask_of({"x"})), (std::vector<std::vector<std::int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(mesh.groups(mesh.mask_of({"y"})), (std::vector<std::vector<std::int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(mesh.groups(0), (std::vector<std::vector<std::int64_t>>{{0}, {1}, {2}, {3}}));
}

// The rule Layout applies to a group token holds for a list of names too (Python's
// Mesh.groups binds this): a dimension named twice is an error, not the same group.
TEST(Mesh, ADimensionNamedTwiceInAGroupIsAnErrorAsInALayout) {
  const Mesh mesh({{"tp", 2}, {"dp", 2}});
  EXPECT_EQ(mesh.mask_of({"tp", "dp"}), DimMask{3});
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)mesh.mask_of({"tp", "dp", "tp"}); }),
            "dimension 'tp' appears twice in group 'tp-dp-tp'");
}

TEST(Mesh, BadDimensionsAreRejectedWithTheirNames) {
  EXPECT_EQ(test::message_of<ConfigError>([&] { Mesh({{"x", 0}}); }),
            "mesh dimension 'x' has size 0, must be a positive integer");
  EXPECT_EQ(test::message_of<ConfigError>([&] { Mesh({{"x", 2}, {"x", 2}}); }),
            "mesh dimension name 'x' appears twice");
  EXPECT_EQ(test::message_of<ConfigError>([&] { Mesh({{"x", std::int64_t{1} << 40}, {"y", std::int64_t{1} << 40}}); }),
            "mesh of sizes [1099511627776, 1099511627776] has more than 9223372036854775807 ranks (64-bit overflow)");
  const Mesh mesh({{"tp", 2}});
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)mesh.mask_of({"dp"}); }),
            "unknown mesh dimension 'dp'; the mesh has tp");
}

}  // namespace
}  // namespace pgroups
