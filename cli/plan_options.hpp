#pragma once
// The options that describe a configuration, shared by plan, explain, verify and bench:
// a config file and flags that override it.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "pgroups/parallel_config.hpp"

namespace pgroups::cli {

class PlanOptions {
 public:
  /// Registers the options on `app`; `--world-size` only when `with_world_size` (under
  /// MPI the world size comes from the communicator).
  void add_to(CLI::App& app, bool with_world_size = true);

  /// The configuration: the file's settings, overridden by each flag given. When
  /// `world_size_from_runtime` is set, it is the world size and a different --world-size
  /// or file value is a ConfigError. Throws what the readers throw.
  [[nodiscard]] ParallelConfig resolve(std::optional<std::int64_t> world_size_from_runtime = std::nullopt) const;

 private:
  std::string config_file_;
  std::int64_t world_size_ = 0;
  std::int64_t pipeline_ = 1;
  std::int64_t tensor_ = 1;
  std::string mode_;
  std::int64_t depth_ = 0;
  std::int64_t seed_ = 0;
  bool legacy_sequence_dp_ = false;
  CLI::Option* config_option_ = nullptr;
  CLI::Option* world_size_option_ = nullptr;
  CLI::Option* pipeline_option_ = nullptr;
  CLI::Option* tensor_option_ = nullptr;
  CLI::Option* mode_option_ = nullptr;
  CLI::Option* depth_option_ = nullptr;
  CLI::Option* seed_option_ = nullptr;
};

}  // namespace pgroups::cli
