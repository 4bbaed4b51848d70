#include "pgroups/launch/outcome.hpp"

#include <fmt/format.h>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups {

std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& caught) {
    return caught.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

std::string failed_elsewhere(std::string_view step, const std::vector<int>& failed_ranks,
                             std::string_view first_message) {
  return fmt::format("{} failed on {} {}; rank {}: {}", step, failed_ranks.size() == 1 ? "rank" : "ranks",
                     rank_list(failed_ranks), failed_ranks.front(), first_message);
}

std::string outcome_text(const std::exception_ptr& local) {
  std::string outcome;
  if (local) outcome.append("!").append(message_of(local));
  return outcome;
}

void require_success_everywhere(Bootstrap& bootstrap, const std::exception_ptr& local, std::string_view step,
                                std::chrono::milliseconds timeout) {
  // One agreement: the texts travel only where they differ.
  require_success_in(bootstrap.all_gather_if_differing(outcome_text(local), timeout, step), local, step);
}

void require_success_in(const std::optional<std::vector<std::string>>& differing, const std::exception_ptr& local,
                        std::string_view step) {
  if (!differing) {
    if (local) std::rethrow_exception(local);  // every rank failed
    return;
  }
  const std::vector<std::string>& outcomes = *differing;
  std::vector<int> failed_ranks;
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    if (!outcomes[r].empty()) failed_ranks.push_back(static_cast<int>(r));
  }
  if (failed_ranks.empty()) return;
  if (local) std::rethrow_exception(local);
  throw BackendError(failed_elsewhere(
      step, failed_ranks, std::string_view(outcomes[static_cast<std::size_t>(failed_ranks.front())]).substr(1)));
}

}  // namespace pgroups
