#include "pgroups/layout/creation_strategy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "../common/did_you_mean.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups {
namespace {

constexpr std::array<std::string_view, 4> kStrategyNames = {"comm_split", "create_group", "per_group", "comm_create"};
// Accepted by parse_creation_strategy beside the names above.
constexpr std::array<std::string_view, 5> kAcceptedNames = {"split", "comm_split", "create_group", "per_group",
                                                            "comm_create"};

}  // namespace

std::string_view strategy_name(CreationStrategy strategy) {
  const auto index = static_cast<std::size_t>(strategy);
  if (index >= kStrategyNames.size()) {
    throw ConfigError(fmt::format("CreationStrategy {} is not a creation strategy: the strategies are 0 to {} ({})",
                                  index, kStrategyNames.size() - 1, fmt::join(kStrategyNames, ", ")));
  }
  return kStrategyNames[index];
}

CreationStrategy parse_creation_strategy(std::string_view text) {
  if (text == "split") return kDefaultCreationStrategy;
  for (CreationStrategy strategy : kAllCreationStrategies) {
    if (strategy_name(strategy) == text) return strategy;
  }
  throw ConfigError(fmt::format(
      "unknown creation strategy {}; the strategy must be one of {} (the default), "
      "comm_split, per_group, comm_create{}",
      quoted_excerpt(text), strategy_name(kDefaultCreationStrategy), detail::did_you_mean(text, kAcceptedNames)));
}

std::string strategy_deprecation(std::string_view text) {
  if (text != "split") return {};
  return fmt::format(
      "strategy 'split' is deprecated: it runs MPI_Comm_create_group, not MPI_Comm_split; say {} "
      "(the default), or comm_split for MPI_Comm_split",
      strategy_name(kDefaultCreationStrategy));
}

}  // namespace pgroups
