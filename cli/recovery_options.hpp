#pragma once
// The options of a recovery, shared by plan and explain: `--lost LIST` or `--alive LIST`
// (ranks and inclusive ranges, "3,17,20-23") and `--shrink DIM`.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pgroups/layout/recovery.hpp"

namespace pgroups::cli {

/// Reads "3,17,20-23" into ranks in the order given, each by the integer options' reader.
/// Throws CLI::ValidationError naming `option` and the item for an empty item, an item
/// that is no decimal integer, a range whose end is below its start, or more than
/// kMaxListedRanks ranks in all.
[[nodiscard]] std::vector<std::int64_t> parse_rank_list(const std::string& text, const std::string& option);

class RecoveryOptions {
 public:
  void add_to(CLI::App& app);
  /// Registers `--what-if node` (plan only): every class of single-node loss, before it happens.
  void add_what_if_to(CLI::App& app);
  /// Registers `--resize-to W` (plan only): the layout of the same shape for a world of W
  /// ranks after an elastic restart (resized), with --shrink.
  void add_resize_to(CLI::App& app);
  /// The resize --resize-to asks for; nothing without it. ConfigError as resized.
  [[nodiscard]] std::optional<Resize> resize(const Layout& layout) const;
  /// The W of --resize-to.
  [[nodiscard]] std::int64_t resize_world() const noexcept { return resize_to_; }
  /// Whether --lost or --alive was given.
  [[nodiscard]] bool given() const;
  /// The recovery of `layout` the options ask for; nothing without --lost or --alive
  /// (CLI::ValidationError for --shrink alone). Throws ConfigError as Recovery does.
  [[nodiscard]] std::optional<Recovery> resolve(const Layout& layout) const;
  /// The what-if of `--what-if node` over `layout`'s nodes (its gpus_per_node), with
  /// --shrink; nothing without --what-if. ConfigError for a layout without gpus_per_node
  /// and as what_if_node_loss.
  [[nodiscard]] std::optional<NodeLossWhatIf> what_if(const Layout& layout) const;

 private:
  std::string lost_;
  std::string alive_;
  std::string shrink_;
  CLI::Option* lost_option_ = nullptr;
  CLI::Option* alive_option_ = nullptr;
  CLI::Option* shrink_option_ = nullptr;
  std::string what_if_;
  CLI::Option* what_if_option_ = nullptr;
  std::int64_t resize_to_ = 0;
  CLI::Option* resize_option_ = nullptr;
};

}  // namespace pgroups::cli
