// A value that is no enumerator (a cast from a wrong integer) is a ConfigError naming
// the number wherever an enum becomes a name or an index, never undefined behaviour.

#include <gtest/gtest.h>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/parallel_config.hpp"
#include "pgroups/layout/parallel_mode.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using test::message_of;

TEST(ConfigEnumNames, OutOfRangeParallelModeIsAConfigError) {
  EXPECT_EQ(message_of<ConfigError>([] { (void)mode_name(static_cast<ParallelMode>(200)); }),
            "ParallelMode 200 is not a parallel mode: the modes are 0 to 18");
  EXPECT_EQ(message_of<ConfigError>([] { (void)mode_name(static_cast<ParallelMode>(kParallelModeCount)); }),
            "ParallelMode 19 is not a parallel mode: the modes are 0 to 18");
  for (ParallelMode mode : kAllParallelModes) EXPECT_FALSE(mode_name(mode).empty());
  static_assert(mode_name(ParallelMode::tensor_2p5d_xz) == "2p5d_xz");  // still a constant expression
}

TEST(ConfigEnumNames, OutOfRangeTensorModeIsAConfigError) {
  EXPECT_EQ(message_of<ConfigError>([] { (void)tensor_mode_name(static_cast<TensorMode>(200)); }),
            "TensorMode 200 is not a tensor mode: the modes are 0 to 5 (none, 1d, 2d, 2.5d, 3d, sequence)");
  ParallelConfig config;
  config.world_size = 8;
  config.tensor_mode = static_cast<TensorMode>(6);
  EXPECT_EQ(message_of<ConfigError>([&] { (void)describe(config); }),
            "TensorMode 6 is not a tensor mode: the modes are 0 to 5 (none, 1d, 2d, 2.5d, 3d, sequence)");
  EXPECT_EQ(message_of<ConfigError>([&] { Layout layout(config); }),
            "TensorMode 6 is not a tensor mode: the modes are 0 to 5 (none, 1d, 2d, 2.5d, 3d, sequence)");
}

TEST(ConfigEnumNames, LayoutQueriesWithAnOutOfRangeModeAreConfigErrors) {
  ParallelConfig config;
  config.world_size = 8;
  const Layout layout(config);
  EXPECT_FALSE(layout.has_kind(static_cast<ParallelMode>(77)));
  EXPECT_EQ(message_of<ConfigError>([&] { (void)layout.group_size(static_cast<ParallelMode>(77)); }),
            "ParallelMode 77 is not a parallel mode: the modes are 0 to 18");
}

TEST(ConfigEnumNames, UnknownTensorModeTextIsEscapedAndCut) {
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_tensor_mode("2d\x1b[0m"); }),
            "unknown tensor mode '2d\\x1b[0m'; the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence");
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_tensor_mode(std::string(1000, 'z')); }),
            "unknown tensor mode '" + std::string(40, 'z') +
                "'...; the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence");
}

}  // namespace
}  // namespace pgroups
