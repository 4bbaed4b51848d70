#include "bootstrap_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/timeout.hpp"

namespace pgroups::cli {

int run_on_bootstrap(std::string_view bootstrap, std::chrono::milliseconds timeout,
                     const std::function<int(Bootstrap&, ContextOptions&)>& job) {
  const std::unique_ptr<Bootstrap> started = start_bootstrap(parse_bootstrap(bootstrap), timeout);
  ContextOptions options;
  options.timeout = timeout;
  return job(*started, options);
}

namespace {

/// A rank's status as it sent it: its exit code in decimal; -1 for anything else.
int exit_code_of(const std::string& status) {
  int code = -1;
  const char* const end = status.data() + status.size();
  const auto [stop, error] = std::from_chars(status.data(), end, code);
  return error == std::errc{} && stop == end && code >= 0 ? code : -1;
}

}  // namespace

std::optional<int> settle_on(Bootstrap& bootstrap, const std::optional<LocalFailure>& failure,
                             std::chrono::milliseconds timeout) {
  std::vector<std::string> statuses;
  try {
    statuses = bootstrap.all_gather(std::to_string(failure ? failure->code : 0), timeout,
                                    "the agreement on every rank's set-up");
  } catch (const TimeoutError& error) {
    print_job_error(bootstrap.rank(), false, error.what());
    return static_cast<int>(ExitCode::timeout);
  }
  std::vector<int> codes;
  for (std::size_t rank = 0; rank < statuses.size(); ++rank) {
    codes.push_back(exit_code_of(statuses[rank]));
    if (codes.back() < 0) {
      // Not this program's status: a process of another protocol on the same store.
      print_job_error(bootstrap.rank(), false,
                      fmt::format("rank {} sent '{}' where its exit status belongs: it does not run this "
                                  "program's protocol (another program on the same store?)",
                                  rank, statuses[rank].substr(0, 40)));
      codes.back() = static_cast<int>(ExitCode::backend);
    }
  }
  const auto [best, worst] = std::minmax_element(codes.begin(), codes.end());
  if (*worst == 0) return std::nullopt;
  if (failure) print_job_error(bootstrap.rank(), *best == *worst, failure->message);
  return *worst;
}

int end_step_on_bootstrap(int rank, const std::exception& error) {
  const bool shared =
      dynamic_cast<const ConfigError*>(&error) != nullptr || dynamic_cast<const MismatchError*>(&error) != nullptr;
  print_job_error(rank, shared, error.what());
  return exit_status_of(error);
}

}  // namespace pgroups::cli
