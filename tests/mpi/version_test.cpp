// The MPI library's name and version, as `pgroups info` shows them.

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "pgroups/mpi/version.hpp"

namespace pgroups::mpi {
namespace {

TEST(MpiVersion, TheLibraryVersionIsOneNonEmptyLineWithoutTrailingBlanks) {
  const std::string version = library_version();
  ASSERT_FALSE(version.empty());
  EXPECT_EQ(version.find('\n'), std::string::npos) << version;
  EXPECT_EQ(version.find('\0'), std::string::npos);
  EXPECT_NE(version.back(), ' ');
}

TEST(MpiVersion, TheStandardVersionIsMajorDotMinor) {
  EXPECT_TRUE(std::regex_match(standard_version(), std::regex("[1-9][0-9]*\\.[0-9]+"))) << standard_version();
}

}  // namespace
}  // namespace pgroups::mpi
