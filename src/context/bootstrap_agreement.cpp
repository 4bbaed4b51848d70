#include "pgroups/context/bootstrap_agreement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pgroups/layout/agreement_record.hpp"

namespace pgroups {

void agree_over_bootstrap(Bootstrap& bootstrap, std::string_view record, std::chrono::milliseconds timeout,
                          std::string_view what) {
  const std::string description = fmt::format("the {} agreement", what);
  const std::uint64_t digest = settings_digest(record);
  std::string mine(sizeof digest, '\0');
  std::memcpy(mine.data(), &digest, sizeof digest);
  if (!bootstrap.all_gather_if_differing(mine, timeout, description)) {
    // The same record everywhere: nothing to say, unless it is an error every rank carries.
    if (is_error_record(record)) judge_records(std::vector<std::string>(bootstrap.size(), std::string(record)), what);
    return;
  }
  judge_records(bootstrap.all_gather(record, timeout, description), what);
}

}  // namespace pgroups
