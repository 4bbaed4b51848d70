// NCCL versions print as "major.minor.patch" in both of NCCL's encodings; CUDA's as
// "major.minor".

#include "pgroups/nccl/version.hpp"

#include <gtest/gtest.h>
#include <nccl.h>

#include <regex>

namespace pgroups::nccl {
namespace {

TEST(NcclVersion, CodesOfBothEncodingsFormatAsDottedTriples) {
  EXPECT_EQ(format_nccl_version(22809), "2.28.9");
  EXPECT_EQ(format_nccl_version(21805), "2.18.5");
  EXPECT_EQ(format_nccl_version(2708), "2.7.8");
  EXPECT_EQ(format_nccl_version(NCCL_VERSION(2, 9, 6)), "2.9.6");
  EXPECT_EQ(format_nccl_version(NCCL_VERSION(3, 0, 0)), "3.0.0");
}

TEST(NcclVersion, RuntimeVersionIsADottedTriple) {
  const std::string version = nccl_version();
  EXPECT_TRUE(std::regex_match(version, std::regex(R"(\d+\.\d+\.\d+)"))) << version;
}

TEST(NcclVersion, CompileTimeVersionMatchesTheHeader) {
  EXPECT_EQ(nccl_compile_version(), format_nccl_version(NCCL_VERSION_CODE) + NCCL_SUFFIX);
}

TEST(NcclVersion, SplitIsAvailableFromNccl218) {
  EXPECT_EQ(split_available(), NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0));
}

TEST(NcclVersion, CudaCodesFormatAsMajorDotMinor) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12040), "12.4");
  EXPECT_EQ(format_cuda_version(11080), "11.8");
}

TEST(NcclVersion, TheCudaRuntimeVersionIsKnownEvenWithoutADriver) {
  EXPECT_TRUE(std::regex_match(cuda_runtime_version(), std::regex(R"(\d+\.\d+)"))) << cuda_runtime_version();
  const std::string driver = cuda_driver_version();
  EXPECT_TRUE(driver.empty() || std::regex_match(driver, std::regex(R"(\d+\.\d+)"))) << driver;
}

}  // namespace
}  // namespace pgroups::nccl
