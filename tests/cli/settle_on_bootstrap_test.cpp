// A job's settle over a program's own bootstrap (make_callback_bootstrap): the statuses every
// rank sent decide the job's; one that is not an exit code is a backend failure said by
// name, never a crash of the rank that reads it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/job.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/launch/callback_bootstrap.hpp"

namespace pgroups::cli {
namespace {

// Rank 0 of a job whose other ranks sent `others`.
std::unique_ptr<JobTransport> rank0_hearing(std::vector<std::string> others) {
  BootstrapCallbacks callbacks;
  callbacks.all_gather = [others](std::string_view mine, std::chrono::milliseconds) {
    std::vector<std::string> all{std::string(mine)};
    all.insert(all.end(), others.begin(), others.end());
    return all;
  };
  return bootstrap_job_transport(
      make_callback_bootstrap(0, static_cast<int>(others.size()) + 1, 0, 1, std::move(callbacks)),
      std::chrono::seconds(1));
}

TEST(SettleOnBootstrap, EveryRankSucceededIsNoStatus) {
  auto job = rank0_hearing({"0", "0"});
  EXPECT_EQ(job->settle(std::nullopt), std::nullopt);
}

TEST(SettleOnBootstrap, TheWorstStatusOfAnyRankIsTheJobs) {
  auto job = rank0_hearing({"3", "8"});
  EXPECT_EQ(job->settle(std::nullopt), 8);
}

TEST(SettleOnBootstrap, AStatusThatIsNotAnExitCodeIsABackendFailureNamingTheRankAndWhatItSent) {
  for (const std::string& hostile : {std::string("hello"), std::string(""), std::string("-4"), std::string("7x"),
                                     std::string("99999999999999999999")}) {
    auto job = rank0_hearing({"0", hostile});
    testing::internal::CaptureStderr();
    const auto status = job->settle(std::nullopt);
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_EQ(status, static_cast<int>(ExitCode::backend)) << hostile;
    EXPECT_NE(said.find("rank 2 sent '" + hostile + "' where its exit status belongs"), std::string::npos) << said;
  }
}

}  // namespace
}  // namespace pgroups::cli
