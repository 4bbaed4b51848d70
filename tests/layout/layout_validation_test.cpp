// Configurations that break a rule are rejected with a message naming value and rule.

#include <gtest/gtest.h>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "support/configs.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using test::preset_config;
using test::rejection;

TEST(LayoutValidation, NonSquareTensorSizeIn2dNamesSizeAndRule) {
  EXPECT_EQ(rejection(preset_config(8, 1, 8, TensorMode::tensor_2d)),
            "tensor size 8 is not a perfect square, required by mode 2d");
}

TEST(LayoutValidation, NonCubeTensorSizeIn3dNamesSizeAndRule) {
  EXPECT_EQ(rejection(preset_config(9, 1, 9, TensorMode::tensor_3d)),
            "tensor size 9 is not a perfect cube, required by mode 3d");
}

TEST(LayoutValidation, TwoPointFiveDNeedsDepthTimesASquare) {
  EXPECT_EQ(
      rejection(preset_config(12, 1, 12, TensorMode::tensor_2p5d, 2)),
      "tensor size 12 is not depth 2 times a perfect square, required by mode 2.5d (tensor size = q * q * depth)");
  EXPECT_EQ(rejection(preset_config(8, 1, 8, TensorMode::tensor_2p5d)),
            "mode 2.5d requires a depth (tensor size = q * q * depth)");
  EXPECT_EQ(rejection(preset_config(8, 1, 8, TensorMode::tensor_2p5d, 0)),
            "depth 0 is invalid: the 2.5d depth must be a positive integer");
}

TEST(LayoutValidation, DepthWithAnotherModeIsRejected) {
  EXPECT_EQ(rejection(preset_config(16, 2, 8, TensorMode::tensor_3d, 2)),
            "depth 2 is not allowed with mode 3d: depth belongs to mode 2.5d only");
}

TEST(LayoutValidation, WorldNotDivisibleByModelSizeNamesAllThree) {
  EXPECT_EQ(rejection(preset_config(10, 2, 4, TensorMode::tensor_2d)),
            "world size 10 is not divisible by pipeline size 2 * tensor size 4 = 8: the data-parallel size "
            "W / (pipeline * tensor) must be a whole number");
}

TEST(LayoutValidation, NonPositiveSizesAreRejected) {
  EXPECT_EQ(rejection(preset_config(0, 1, 1, TensorMode::none)),
            "world size 0 is invalid: it must be a positive integer");
  EXPECT_EQ(rejection(preset_config(8, -2, 1, TensorMode::none)),
            "pipeline size -2 is invalid: it must be a positive integer");
  EXPECT_EQ(rejection(preset_config(8, 1, 0, TensorMode::none)),
            "tensor size 0 is invalid: it must be a positive integer");
}

TEST(LayoutValidation, SizesWhoseProductOverflowsAreRejected) {
  const std::int64_t big = std::int64_t{1} << 40;
  EXPECT_EQ(rejection(preset_config(big, big, big, TensorMode::none)),
            "pipeline size 1099511627776 * tensor size 1099511627776 overflows 64 bits");
}

TEST(LayoutValidation, UnknownModeSuggestsTheCaseFix) {
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)parse_tensor_mode("2D"); }),
            "unknown tensor mode '2D'; the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence (did you mean 2d?)");
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)parse_tensor_mode("4d"); }),
            "unknown tensor mode '4d'; the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence");
  EXPECT_EQ(parse_tensor_mode("None"), TensorMode::none);
}

TEST(LayoutValidation, AskingForAModeThatWasNotCreatedNamesTheModesThatExist) {
  const Layout layout(preset_config(4, 1, 4, TensorMode::tensor_1d));
  EXPECT_EQ(
      test::message_of<StateError>([&] { (void)layout.group_size(ParallelMode::pipe); }),
      "mode pipe is not created for W=4 pipeline=1 tensor=4 mode=1d; the modes are: global, data, model, tensor, 1d");
}

TEST(LayoutValidation, RanksOutsideTheWorldAreRejected) {
  const Layout layout(preset_config(4, 1, 4, TensorMode::tensor_1d));
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)layout.local_rank(4, ParallelMode::tensor); }),
            "rank 4 is outside the world of 4 ranks (valid: 0..3)");
  EXPECT_EQ(test::message_of<ConfigError>([&] { (void)layout.coordinates(-1); }),
            "rank -1 is outside the world of 4 ranks (valid: 0..3)");
}

}  // namespace
}  // namespace pgroups
