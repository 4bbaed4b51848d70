// `pgroups explain` answers for one rank of any world, consistently with the layout.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "pgroups/layout/layout.hpp"
#include "support/configs.hpp"
#include "support/golden.hpp"
#include "support/run_command.hpp"

namespace pgroups {
namespace {

using test::run_command;

TEST(ExplainCommand, BillionRankWorldShowsCoordinatesAndElidedGroups) {
  const auto result = run_command(fmt::format(
      "{} explain --world-size 1073741824 --pipeline 16 --tensor 64 --mode 3d --rank 987654321", PGROUPS_CLI));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("coordinates: data=964506/1048576 pipe=2/16 tensor=49/64 i=1/4 j=0/4 k=3/4"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("[0, 1, 2, 3, ..., 1073741820, 1073741821, 1073741822, 1073741823]"), std::string::npos);
}

TEST(ExplainCommand, JsonAgreesWithTheLayoutForEveryRank) {
  ParallelConfig config = test::preset_config(24, 3, 4, TensorMode::sequence);
  const Layout layout(config);
  std::vector<std::string> modes;
  for (ParallelMode mode : layout.modes()) modes.emplace_back(mode_name(mode));
  std::sort(modes.begin(), modes.end());
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
    SCOPED_TRACE(fmt::format("rank {}", rank));
    const auto result =
        run_command(fmt::format("{} explain -w 24 -p 3 -t 4 -m sequence -r {} --format json", PGROUPS_CLI, rank));
    ASSERT_EQ(result.status, 0) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json.at("rank").get<std::int64_t>(), rank);
    std::vector<std::string> reported;
    for (const auto& [name, _] : json.at("kinds").items()) reported.push_back(name);
    EXPECT_EQ(reported, modes);  // nlohmann::json keeps keys sorted
    for (ParallelMode mode : layout.modes()) {
      SCOPED_TRACE(mode_name(mode));
      const auto& entry = json.at("kinds").at(std::string(mode_name(mode)));
      EXPECT_EQ(entry.at("local_rank").get<std::int64_t>(), layout.local_rank(rank, mode));
      EXPECT_EQ(entry.at("group").get<std::vector<std::int64_t>>(), layout.group_of(rank, mode));
      EXPECT_EQ(entry.at("group_index").get<std::int64_t>(), layout.group_index(rank, mode));
      EXPECT_EQ(entry.at("group_size").get<std::int64_t>(), layout.group_size(mode));
    }
  }
}

TEST(ExplainCommand, RankOutsideTheWorldIsAConfigError) {
  const auto result = run_command(fmt::format("{} explain -w 8 -r 8", PGROUPS_CLI));
  EXPECT_EQ(result.status, 3);
  EXPECT_NE(result.err.find("rank 8 is outside the world of 8 ranks"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace pgroups
