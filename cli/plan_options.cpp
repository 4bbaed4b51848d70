#include "plan_options.hpp"

#include <fmt/format.h>

#include "integer_option.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/config/config_merge.hpp"
#include "pgroups/config/config_reader.hpp"
#include "pgroups/config/rank_map_file.hpp"

namespace pgroups::cli {

void PlanOptions::add_to(CLI::App& app, bool with_world_size) {
  config_option_ = app.add_option("--config", config_file_,
                                  "Configuration file: .toml, .json or Colossal-AI .py (flags override it)");
  if (with_world_size) {
    world_size_option_ = add_integer_option(app, "-w,--world-size", world_size_, "Number of ranks W");
  }
  pipeline_option_ = add_integer_option(app, "-p,--pipeline", pipeline_, "Pipeline-parallel size (default 1)");
  tensor_option_ = add_integer_option(app, "-t,--tensor", tensor_,
                                      "Tensor-parallel size (sequence size in mode sequence; default 1)");
  mode_option_ = app.add_option("-m,--mode", mode_, "Tensor mode: none, 1d, 2d, 2.5d, 3d, sequence");
  depth_option_ = add_integer_option(app, "-d,--depth", depth_, "2.5D depth (mode 2.5d only)");
  seed_option_ = add_integer_option(app, "--seed", seed_, "Base random seed (default 1024)");
  app.add_flag("--legacy-sequence-dp", legacy_sequence_dp_,
               "Build Colossal-AI's contiguous sequence_dp blocks instead of one group per pipeline stage");
  rank_map_option_ = app.add_option(
      "--rank-map", rank_map_file_,
      "JSON file: the rank map (entry r is the launcher rank that runs mesh rank r), as a list or an object with "
      "rank_map (pgroups place --format json); replaces the config file's parallel.rank_map");
  add_mesh_to(app);
}

void PlanOptions::add_gpus_per_node_to(CLI::App& app) {
  gpus_per_node_option_ = add_integer_option(
      app, "--gpus-per-node", gpus_per_node_,
      "GPUs per node G: nodes are consecutive blocks of G ranks; adds the locality report and warns when a tensor "
      "group crosses nodes");
}

ParallelConfig PlanOptions::resolve(std::optional<std::int64_t> world_size_from_runtime) const {
  if (config_option_->count() && config_file_.empty()) {
    // An empty path is most likely an unset shell variable; the defaults would hide it.
    throw IoError(
        "--config was given an empty path: name a .toml, .json or .py file, or leave --config out to use "
        "the flags alone");
  }
  const ParallelConfig file = config_option_->count() ? read_config_file(config_file_) : ParallelConfig{};
  ConfigOverrides overrides;
  // merge_config refuses a given size below 1 (0 is only the library's "not given").
  if (world_size_option_ && world_size_option_->count()) overrides.world_size = world_size_;
  if (pipeline_option_->count()) overrides.pipeline = pipeline_;
  if (tensor_option_->count()) overrides.tensor = tensor_;
  if (mode_option_->count()) overrides.mode = parse_tensor_mode(mode_);
  if (depth_option_->count()) overrides.depth = depth_;
  if (seed_option_->count()) overrides.seed = seed_;
  if (gpus_per_node_option_ != nullptr && gpus_per_node_option_->count()) overrides.gpus_per_node = gpus_per_node_;
  if (legacy_sequence_dp_) overrides.legacy_sequence_dp = true;
  if (rank_map_option_ != nullptr && rank_map_option_->count()) {
    if (rank_map_file_.empty()) throw IoError("--rank-map was given an empty path: name a JSON file");
    overrides.rank_map = read_rank_map_file(rank_map_file_);
  }
  apply_mesh(overrides);
  if (world_size_from_runtime) {
    const std::int64_t given = overrides.world_size.value_or(file.world_size);
    if (given != 0 && given != *world_size_from_runtime) {
      throw ConfigError(
          fmt::format("world size {} was given, but the job has {} ranks", given, *world_size_from_runtime));
    }
    // The job's size, merged as a given one, so that a rest dimension is sized by it (0:
    // bench --model, whose worlds are not one size).
    if (*world_size_from_runtime > 0) overrides.world_size = *world_size_from_runtime;
  }
  // The one rule of flags over a file, shared with Python (pgroups/config/config_merge.hpp); it
  // also refuses --group without any mesh.
  ParallelConfig config = merge_config(file, overrides, "--mesh NAME=SIZE,... or --order with sizes");
  if (world_size_from_runtime) {
    config.world_size = *world_size_from_runtime;
  } else if (!(world_size_option_ && world_size_option_->count())) {
    require_world_size(config, "--world-size W");
  }
  return config;
}

std::vector<NamedFile> PlanOptions::input_files() const {
  std::vector<NamedFile> inputs;
  if (config_option_ != nullptr && config_option_->count() > 0) inputs.push_back({"--config", config_file_});
  if (rank_map_option_ != nullptr && rank_map_option_->count() > 0) inputs.push_back({"--rank-map", rank_map_file_});
  return inputs;
}

}  // namespace pgroups::cli
