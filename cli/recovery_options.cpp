#include "recovery_options.hpp"

#include <fmt/format.h>

#include "integer_option.hpp"
#include "pgroups/common/error.hpp"

namespace pgroups::cli {

std::vector<std::int64_t> parse_rank_list(const std::string& text, const std::string& option) {
  std::vector<std::int64_t> ranks;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    if (item.empty()) {
      throw CLI::ValidationError(
          fmt::format("{} '{}' has an empty item: list ranks as 3,17 or ranges as 20-23", option, text));
    }
    // A '-' past the first character splits a range; a leading one is a negative rank.
    const std::size_t dash = item.find('-', 1);
    const std::int64_t first = parse_integer_option(item.substr(0, dash), option, 0, INT64_MAX);
    const std::int64_t last =
        dash == std::string::npos ? first : parse_integer_option(item.substr(dash + 1), option, 0, INT64_MAX);
    if (last < first) {
      throw CLI::ValidationError(
          fmt::format("{} range {} ends below its start: a range is FIRST-LAST, FIRST <= LAST", option, item));
    }
    if (last - first >= kMaxListedRanks - static_cast<std::int64_t>(ranks.size())) {
      throw CLI::ValidationError(fmt::format("{} names more than {} ranks", option, kMaxListedRanks));
    }
    // Counted, not compared: a range that ends at the largest 64-bit integer has no rank
    // past its end to stop at.
    for (std::int64_t offset = 0; offset <= last - first; ++offset) ranks.push_back(first + offset);
    start = comma + 1;
  }
  return ranks;
}

void RecoveryOptions::add_to(CLI::App& app) {
  auto check = [](const std::string& option) {
    return CLI::Validator(
        [option](std::string& value) {
          try {
            (void)parse_rank_list(value, option);
          } catch (const CLI::ValidationError& error) {
            return std::string(error.what());
          }
          return std::string();
        },
        "LIST");
  };
  lost_option_ =
      app.add_option("--lost", lost_,
                     "Plan the survivors' layout after these ranks died (3,17 or ranges 20-23): the replicas of "
                     "the shrinking dimension that lost a rank are dropped")
          ->check(check("--lost"));
  alive_option_ =
      app.add_option("--alive", alive_,
                     "Plan the layout of these ranks (the others of the world are lost; ranks at or past the "
                     "world size join as new replicas)")
          ->check(check("--alive"))
          ->excludes(lost_option_);
  shrink_option_ = app.add_option("--shrink", shrink_,
                                  "The dimension that loses (or gains) whole replicas: dp by default (a preset's data; "
                                  "also pp, or tp in modes none/1d/sequence)");
}

void RecoveryOptions::add_what_if_to(CLI::App& app) {
  what_if_option_ = app.add_option("--what-if", what_if_,
                                   "Before any loss: for each node whose loss the job could suffer (nodes of "
                                   "--gpus-per-node GPUs), the survivors' shape, the spares and the bill, one line "
                                   "per class of outcome")
                        ->check(CLI::IsMember({"node"}))
                        ->excludes(lost_option_)
                        ->excludes(alive_option_);
}

void RecoveryOptions::add_resize_to(CLI::App& app) {
  resize_option_ = add_integer_option(app, "--resize-to", resize_to_,
                                      "After an elastic restart with another number of ranks: the largest layout of "
                                      "the same shape a world of W ranks holds (whole replicas of --shrink, the "
                                      "highest ranks spares)");
  resize_option_->excludes(lost_option_)->excludes(alive_option_);
  if (what_if_option_ != nullptr) resize_option_->excludes(what_if_option_);
}

std::optional<Resize> RecoveryOptions::resize(const Layout& layout) const {
  if (resize_option_ == nullptr || resize_option_->count() == 0) return std::nullopt;
  return resized(layout, resize_to_, shrink_);
}

std::optional<NodeLossWhatIf> RecoveryOptions::what_if(const Layout& layout) const {
  if (what_if_option_ == nullptr || what_if_option_->count() == 0) return std::nullopt;
  if (!layout.config().gpus_per_node) {
    throw ConfigError("--what-if node needs the nodes: give --gpus-per-node G (or gpus_per_node in the configuration)");
  }
  return what_if_node_loss(layout, *layout.config().gpus_per_node, shrink_);
}

bool RecoveryOptions::given() const { return lost_option_->count() > 0 || alive_option_->count() > 0; }

std::optional<Recovery> RecoveryOptions::resolve(const Layout& layout) const {
  if (!given()) {
    const bool other_use = (what_if_option_ != nullptr && what_if_option_->count() > 0) ||
                           (resize_option_ != nullptr && resize_option_->count() > 0);
    if (shrink_option_->count() > 0 && !other_use) {
      throw CLI::ValidationError("--shrink names the dimension a recovery shrinks: give --lost or --alive too");
    }
    return std::nullopt;
  }
  if (alive_option_->count() > 0) {
    return Recovery(layout,
                    recovery_request_from_alive(layout.world_size(), parse_rank_list(alive_, "--alive"), shrink_));
  }
  return Recovery(layout, RecoveryRequest{parse_rank_list(lost_, "--lost"), {}, shrink_});
}

}  // namespace pgroups::cli
