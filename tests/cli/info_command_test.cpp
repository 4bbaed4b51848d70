// `pgroups info` tells what this build is and what it finds here, the same facts the
// libraries report in process; it needs neither mpirun nor a GPU.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <string>

#include "support/run_command.hpp"

#ifdef PGROUPS_TEST_WITH_MPI
#include "pgroups/mpi/version.hpp"
#endif
#ifdef PGROUPS_HAVE_NCCL
#include "pgroups/nccl/device.hpp"
#include "pgroups/nccl/version.hpp"
#endif

namespace pgroups {
namespace {

using test::run_command;

std::string info(const std::string& arguments = "") {
  const auto result = run_command(fmt::format("{} info {}", PGROUPS_CLI, arguments));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err, "");
  return result.out;
}

TEST(InfoCommand, TextNamesTheVersionTheBuildAndEachBackendWithItsLibraryVersion) {
  const std::string out = info();
  EXPECT_EQ(out.rfind(fmt::format("pgroups {}\n", PGROUPS_TEST_VERSION), 0), 0U) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("\n  build: +[^,\n]+, [A-Za-z]+ [0-9.]+\n"))) << out;
#ifdef PGROUPS_TEST_WITH_MPI
  EXPECT_NE(out.find(fmt::format("\n  mpi:       {} (MPI {}; ULFM MPIX_Comm_shrink {})\n", mpi::library_version(),
                                 mpi::standard_version(),
                                 mpi::has_ulfm() ? "yes" : "no: a lost rank ends the job, see pgroups plan --lost")),
            std::string::npos)
      << out;
#endif
  // Every backend built, gloo included, in one line.
  std::string backends;
#ifdef PGROUPS_TEST_WITH_MPI
  backends += "mpi";
#endif
#ifdef PGROUPS_HAVE_NCCL
  backends += backends.empty() ? "nccl" : ", nccl";
#endif
#ifdef PGROUPS_TEST_WITH_GLOO
  backends += backends.empty() ? "gloo" : ", gloo";
  EXPECT_NE(out.find("\n  gloo:      built (CPU groups over TCP, on every bootstrap)\n"), std::string::npos) << out;
#endif
  if (!backends.empty()) EXPECT_NE(out.find("\n  backends:  " + backends + "\n"), std::string::npos) << out;
#ifdef PGROUPS_HAVE_NCCL
  EXPECT_TRUE(std::regex_search(out, std::regex("\n  nccl: +2\\.[0-9]+\\.[0-9]+ \\(compiled against 2\\.[0-9]+")))
      << out;
  EXPECT_NE(out.find(fmt::format("\n  nccl:      {} (compiled against {}; ncclCommSplit {})\n", nccl::nccl_version(),
                                 nccl::nccl_compile_version(), nccl::split_available() ? "yes" : "no")),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(fmt::format("\n  gpus:      {} visible\n", nccl::visible_gpu_count())), std::string::npos) << out;
  EXPECT_NE(out.find("\n  cuda:      runtime " + nccl::cuda_runtime_version()), std::string::npos) << out;
#else
  EXPECT_NE(out.find("\n  nccl:      not built (install NCCL with scripts/install-nccl.sh, then configure with "
                     "-DPGROUPS_WITH_NCCL=ON)\n"),
            std::string::npos)
      << out;
#endif
}

TEST(InfoCommand, JsonReportsTheSameFactsAsTheLibraries) {
  const nlohmann::json json = nlohmann::json::parse(info("--format json"));
  EXPECT_EQ(json.at("version"), PGROUPS_TEST_VERSION);
  EXPECT_FALSE(json.at("build_type").get<std::string>().empty());
  EXPECT_FALSE(json.at("compiler").get<std::string>().empty());
  const nlohmann::json& backends = json.at("backends");
#ifdef PGROUPS_TEST_WITH_MPI
  EXPECT_EQ(backends.at("mpi").at("built"), true);
  EXPECT_EQ(backends.at("mpi").at("library"), mpi::library_version());
  EXPECT_EQ(backends.at("mpi").at("standard"), mpi::standard_version());
  EXPECT_EQ(backends.at("mpi").at("ulfm"), mpi::has_ulfm());
#endif
#ifdef PGROUPS_HAVE_NCCL
  const nlohmann::json& nccl = backends.at("nccl");
  EXPECT_EQ(nccl.at("built"), true);
  EXPECT_EQ(nccl.at("version"), nccl::nccl_version());
  EXPECT_EQ(nccl.at("compile_version"), nccl::nccl_compile_version());
  EXPECT_EQ(nccl.at("split"), nccl::split_available());
  EXPECT_EQ(json.at("visible_gpus"), nccl::visible_gpu_count());
  EXPECT_EQ(json.at("cuda").at("runtime"), nccl::cuda_runtime_version());
  const std::string driver = nccl::cuda_driver_version();
  EXPECT_EQ(json.at("cuda").at("driver"), driver.empty() ? nlohmann::json() : nlohmann::json(driver));
#else
  EXPECT_EQ(backends.at("nccl"), nlohmann::json({{"built", false}}));
  EXPECT_TRUE(json.at("visible_gpus").is_null());
#endif
#ifdef PGROUPS_TEST_WITH_GLOO
  EXPECT_EQ(backends.at("gloo"), nlohmann::json({{"built", true}}));
#else
  EXPECT_EQ(backends.at("gloo"), nlohmann::json({{"built", false}}));
#endif
}

TEST(InfoCommand, RunsInAnEmptyEnvironmentWithoutMpirunAndWithoutError) {
  // No launcher variables, no PATH to an MPI: what a user's bare shell or a batch
  // script's first line gives.
  const auto result = run_command(fmt::format("env -i {} info", PGROUPS_CLI));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out.rfind("pgroups ", 0), 0U) << result.out;
}

TEST(InfoCommand, AMalformedLauncherVariableIsUnknownAndWarnedInTheReadersWords) {
  // The words of pgroups::count_problem, which nccl::choose_device refuses the same value
  // with (tests/launch/environment_test.cpp, tests/nccl/device_test.cpp).
  for (const char* text : {"abc", "-1", "99999999999999999999"}) {
    const auto result =
        run_command(fmt::format("env -i OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_LOCAL_RANK='{}' "
                                "{} info --format json",
                                text, PGROUPS_CLI));
    EXPECT_EQ(result.status, 0) << result.err;
    const std::string problem = fmt::format(
        "environment variable OMPI_COMM_WORLD_LOCAL_RANK='{}' is malformed: it must be a non-negative decimal "
        "integer (digits only) that fits in 64 bits",
        text);
    EXPECT_EQ(result.err, fmt::format("pgroups: warning: {}\n", problem));
    const auto launcher = nlohmann::json::parse(result.out).at("launcher");
    EXPECT_EQ(launcher.at("name"), "open_mpi");
    EXPECT_TRUE(launcher.at("local_rank").is_null());
    EXPECT_EQ(launcher.at("malformed"), nlohmann::json::array({problem}));
  }
}

TEST(InfoCommand, AnUnknownFormatIsAUsageError) {
  const auto result = run_command(fmt::format("{} info --format yaml", PGROUPS_CLI));
  EXPECT_EQ(result.status, 2) << result.err;
}

}  // namespace
}  // namespace pgroups
