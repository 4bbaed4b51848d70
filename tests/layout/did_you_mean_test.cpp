#include "common/did_you_mean.hpp"

#include <gtest/gtest.h>

#include <array>

namespace pgroups::detail {
namespace {

constexpr std::array<std::string_view, 3> kKeys = {"pipeline", "tensor", "world_size"};

TEST(DidYouMean, SuggestsTheKeyOneTypoAway) {
  EXPECT_EQ(did_you_mean("pipline", kKeys), " (did you mean pipeline?)");
  EXPECT_EQ(did_you_mean("tensr", kKeys), " (did you mean tensor?)");
}

TEST(DidYouMean, StaysSilentForUnrelatedWords) {
  EXPECT_EQ(did_you_mean("batch", kKeys), "");
  constexpr std::array<std::string_view, 3> modes = {"1d", "2d", "3d"};
  EXPECT_EQ(did_you_mean("4d", modes), "");
  EXPECT_EQ(did_you_mean("2D", modes), " (did you mean 2d?)");
}

}  // namespace
}  // namespace pgroups::detail
