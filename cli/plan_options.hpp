#pragma once
// The options that describe a configuration, shared by plan, explain, verify and bench:
// a config file and flags that override it.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "output_file.hpp"
#include "pgroups/config/config_merge.hpp"
#include "pgroups/layout/parallel_config.hpp"

namespace pgroups::cli {

class PlanOptions {
 public:
  /// Registers the options on `app`; `--world-size` only when `with_world_size` (under
  /// MPI the world size comes from the communicator).
  void add_to(CLI::App& app, bool with_world_size = true);

  /// The configuration: the file's settings, overridden by each flag given. When
  /// `world_size_from_runtime` is set, it is the world size and a different --world-size
  /// or file value is a ConfigError. Throws what the readers throw.
  /// Registers --gpus-per-node (plan and explain: the nodes of a planned job). Its value,
  /// when given, overrides the file's `gpus_per_node` in resolve().
  void add_gpus_per_node_to(CLI::App& app);

  /// Every file these options read, as given (empty text included): --config and
  /// --rank-map. A command checks its outputs against them (check_outputs), so that no
  /// output overwrites a file the configuration was read from.
  [[nodiscard]] std::vector<NamedFile> input_files() const;

  [[nodiscard]] ParallelConfig resolve(std::optional<std::int64_t> world_size_from_runtime = std::nullopt) const;

 private:
  /// The named-mesh options (mesh_options.cpp): `--mesh tp=2,dp=4,pp=2`, repeated
  /// `--group TOKEN`, and Megatron's `--order tp-cp-ep-dp-pp` with `--tp/--cp/--ep/--dp/--pp`.
  void add_mesh_to(CLI::App& app);
  /// The mesh and groups the flags give, as overrides of the file's (merge_config refuses
  /// groups without any mesh); ConfigError for --mesh together with --order or a size
  /// flag. With --order, a missing --dp is the rest dimension (merge_config sizes it).
  void apply_mesh(ConfigOverrides& overrides) const;

  std::string mesh_;
  std::vector<std::string> groups_;
  std::string order_;
  std::int64_t tp_ = 1, cp_ = 1, ep_ = 1, dp_ = 1, pp_ = 1;
  CLI::Option* mesh_option_ = nullptr;
  CLI::Option* order_option_ = nullptr;
  CLI::Option* tp_option_ = nullptr;
  CLI::Option* cp_option_ = nullptr;
  CLI::Option* ep_option_ = nullptr;
  CLI::Option* dp_option_ = nullptr;
  CLI::Option* pp_option_ = nullptr;

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
  std::int64_t gpus_per_node_ = 0;
  CLI::Option* gpus_per_node_option_ = nullptr;
  std::string rank_map_file_;
  CLI::Option* rank_map_option_ = nullptr;
};

}  // namespace pgroups::cli
