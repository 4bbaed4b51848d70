#include "parallel_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>

#include "../common/did_you_mean.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/layout/rank_map.hpp"
#include "table_reader.hpp"

namespace pgroups::detail {
namespace {

constexpr std::array<std::string_view, 7> kParallelKeys = {
    "pipeline", "tensor", "world_size", "legacy_sequence_dp", "seed", "gpus_per_node", "rank_map"};
constexpr std::array<std::string_view, 3> kTensorKeys = {"size", "mode", "depth"};
constexpr std::array<std::string_view, 1> kPipelineKeys = {"size"};
constexpr std::array<std::string_view, 2> kMeshKeys = {"order", "groups"};

class ParallelTableReader : public TableReader {
 public:
  using TableReader::TableReader;

  ParallelConfig read(const ConfigValue& root) const {
    if (root.kind != ValueKind::table) {
      fail(root.position, fmt::format("the top level must be {}, found {}", words_.a_table, found(root)));
    }
    ParallelConfig config;
    const bool has_parallel = root.find(kParallelKey) != nullptr;
    // In source order, so that the first mistake in the file is the one named.
    for (const ConfigEntry& entry : root.entries) {
      if (entry.key == kClusterKey) {
        // A cluster description (cluster_reader.hpp) may share the file; it is no setting.
      } else if (entry.key == kMeshKey) {
        config.mesh = read_mesh(entry.value);
      } else if (entry.key == kParallelKey) {
        read_parallel(entry.value, config);
      } else if (format_ != ConfigFormat::python) {
        unknown_top_level_key(entry);
      } else if (!has_parallel) {
        // The builder keeps, beside `parallel` and `mesh`, only a top-level key of a .py
        // config that looks like a misspelling of `parallel`: reading the defaults then
        // would hide the user's settings.
        fail(entry.key_position,
             fmt::format("unknown top-level key {}: the settings are read from parallel (and mesh) only, and "
                         "without parallel the defaults would be used (did you mean {}?)",
                         quoted_excerpt(entry.key), kParallelKey));
      }
    }
    return config;
  }

 private:
  // A TOML or JSON file holds pgroups' settings alone: another top-level key is a
  // mistake, most often a setting of parallel written outside it (in TOML, a key above
  // the first [table] header is a top-level key).
  [[noreturn]] void unknown_top_level_key(const ConfigEntry& entry) const {
    constexpr std::array<std::string_view, 3> kTopLevelKeys = {kParallelKey, kMeshKey, kClusterKey};
    std::string hint;
    if (std::find(kParallelKeys.begin(), kParallelKeys.end(), entry.key) != kParallelKeys.end()) {
      hint = format_ == ConfigFormat::toml
                 ? fmt::format("; {} is a setting of parallel: write it under [parallel] (or as parallel.{})",
                               entry.key, entry.key)
                 : fmt::format("; {} is a setting of parallel: move it into the \"parallel\" object", entry.key);
    } else if (is_misspelled_parallel(entry.key)) {
      hint = fmt::format(" (did you mean {}?)", kParallelKey);
    } else {
      hint = did_you_mean(entry.key, kTopLevelKeys);
      if (hint.empty()) hint = "; a training run's other settings belong in a file of their own";
    }
    fail(entry.key_position,
         fmt::format("unknown top-level key {}: a {} configuration holds parallel, mesh and cluster only{}",
                     quoted_excerpt(entry.key), format_ == ConfigFormat::toml ? "TOML" : "JSON", hint));
  }

  void read_parallel(const ConfigValue& value, ParallelConfig& config) const {
    if (value.kind != ValueKind::table) wrong_type(value, "parallel", words_.a_table);
    for (const ConfigEntry& entry : value.entries) {
      if (entry.key == "pipeline") {
        config.pipeline = size_setting(entry.value, "parallel.pipeline");
      } else if (entry.key == "tensor") {
        read_tensor(entry.value, config);
      } else if (entry.key == "world_size") {
        config.world_size = integer(entry.value, "parallel.world_size");
        // 0 is the library's "not given"; written in a file it is a size, and an invalid one.
        if (config.world_size == 0) {
          throw ConfigError(
              "parallel.world_size 0 is invalid: it must be a positive integer (leave it out to take "
              "a mesh's product)");
        }
      } else if (entry.key == "legacy_sequence_dp") {
        if (entry.value.kind != ValueKind::boolean) wrong_type(entry.value, "parallel.legacy_sequence_dp", "a boolean");
        config.legacy_sequence_dp = entry.value.boolean;
      } else if (entry.key == "seed") {
        config.seed = integer(entry.value, "parallel.seed");
      } else if (entry.key == "gpus_per_node") {
        config.gpus_per_node = integer(entry.value, "parallel.gpus_per_node");
      } else if (entry.key == "rank_map") {
        config.rank_map = read_rank_map(entry.value);
      } else {
        unknown_key(entry, "parallel", kParallelKeys);
      }
    }
  }

  // `[mesh]`: `order` (names fastest first), `groups` (tokens) and every other key the
  // size of the dimension it names.
  MeshConfig read_mesh(const ConfigValue& value) const {
    if (value.kind != ValueKind::table) wrong_type(value, "mesh", words_.a_table);
    if (value.integer > static_cast<std::int64_t>(ValueTreeBuilder::kMaxKeptEntries)) {
      fail(value.position,
           fmt::format("mesh has {} keys; at most {} are allowed", value.integer, ValueTreeBuilder::kMaxKeptEntries));
    }
    MeshConfig mesh;
    const ConfigValue* order = nullptr;
    std::vector<MeshDim> sizes;
    for (const ConfigEntry& entry : value.entries) {
      if (entry.key == "order") {
        if (entry.value.kind != ValueKind::string) wrong_type(entry.value, "mesh.order", "a string");
        order = &entry.value;
      } else if (entry.key == "groups") {
        read_mesh_groups(entry.value, mesh);
      } else if (entry.value.kind == ValueKind::integer || entry.value.kind == ValueKind::big_integer) {
        sizes.push_back({entry.key, integer(entry.value, fmt::format("mesh.{}", printable_excerpt(entry.key, 40)))});
      } else {
        fail(entry.value.position,
             fmt::format("mesh.{} must be an integer (the size of dimension {}), found {}; the other keys of mesh "
                         "are order and groups{}",
                         printable_excerpt(entry.key, 40), quoted_excerpt(entry.key), found(entry.value),
                         did_you_mean(entry.key, kMeshKeys)));
      }
    }
    if (order == nullptr) {
      fail(value.position, fmt::format("mesh needs an order, the dimension names fastest first: order = {}tp-dp-pp{}",
                                       words_.quote, words_.quote));
    }
    try {
      // Read whole: only the excerpts that messages quote are cut.
      mesh.dims = mesh_dims_from_order(order->text, sizes);
    } catch (const ConfigError& error) {
      throw ConfigError(located(source_, order->position, error.what()));
    }
    return mesh;
  }

  // `rank_map = [3, 0, 1, 2]`: entry r is the launcher rank that runs mesh rank r; whether it
  // is a permutation of the world is Layout's rule (rank_map.hpp).
  std::vector<std::int64_t> read_rank_map(const ConfigValue& value) const {
    if (value.kind != ValueKind::array) {
      wrong_type(value, "parallel.rank_map", fmt::format("{} of integers", words_.an_array));
    }
    if (value.integer > static_cast<std::int64_t>(kMaxRankMapEntries)) {
      fail(value.position, fmt::format("parallel.rank_map has {} entries; at most {} are read from a configuration "
                                       "file (give a larger map by --rank-map FILE)",
                                       value.integer, kMaxRankMapEntries));
    }
    if (value.entries.empty()) fail(value.position, fmt::format("parallel.rank_map {}", kEmptyRankMap));
    std::vector<std::int64_t> map;
    map.reserve(value.entries.size());
    for (std::size_t i = 0; i < value.entries.size(); ++i) {
      const ConfigValue& element = value.entries[i].value;
      map.push_back(integer(element, fmt::format("parallel.rank_map[{}]", i)));
    }
    return map;
  }

  void read_mesh_groups(const ConfigValue& value, MeshConfig& mesh) const {
    if (value.kind != ValueKind::array) {
      wrong_type(value, "mesh.groups", fmt::format("{} of strings", words_.an_array));
    }
    if (value.integer > static_cast<std::int64_t>(ValueTreeBuilder::kMaxKeptEntries)) {
      fail(value.position, fmt::format("mesh.groups has {} entries; at most {} are allowed", value.integer,
                                       ValueTreeBuilder::kMaxKeptEntries));
    }
    for (std::size_t i = 0; i < value.entries.size(); ++i) {
      const ConfigValue& element = value.entries[i].value;
      if (element.kind != ValueKind::string) wrong_type(element, fmt::format("mesh.groups[{}]", i), "a string");
      mesh.groups.push_back(element.text);
    }
  }

  // `pipeline = N` or `pipeline = {size = N}`.
  std::int64_t size_setting(const ConfigValue& value, std::string_view path) const {
    if (value.kind == ValueKind::table) {
      std::optional<std::int64_t> size;
      for (const ConfigEntry& entry : value.entries) {
        if (entry.key != "size") unknown_key(entry, path, kPipelineKeys);
        size = integer(entry.value, fmt::format("{}.size", path));
      }
      if (!size) missing_size(value, path);
      return *size;
    }
    if (value.kind != ValueKind::integer && value.kind != ValueKind::big_integer) {
      wrong_type(value, path, fmt::format("an integer or {}", words_.a_table));
    }
    return integer(value, path);
  }

  void read_tensor(const ConfigValue& value, ParallelConfig& config) const {
    if (value.kind != ValueKind::table) {
      config.tensor_size = size_setting(value, "parallel.tensor");
      return;
    }
    bool has_size = false;
    for (const ConfigEntry& entry : value.entries) {
      if (entry.key == "size") {
        config.tensor_size = integer(entry.value, "parallel.tensor.size");
        has_size = true;
      } else if (entry.key == "mode") {
        config.tensor_mode = tensor_mode(entry.value);
      } else if (entry.key == "depth") {
        if (entry.value.kind == ValueKind::null) {
          config.depth.reset();
        } else {
          config.depth = integer(entry.value, "parallel.tensor.depth", "an integer" + or_null());
        }
      } else {
        unknown_key(entry, "parallel.tensor", kTensorKeys);
      }
    }
    if (!has_size) missing_size(value, "parallel.tensor");
  }

  // Colossal-AI reads a table's size as `table['size']`: a table without one is an error
  // there, and reading it as size 1 here would hide a typo or a truncated file.
  [[noreturn]] void missing_size(const ConfigValue& table, std::string_view path) const {
    fail(table.position, fmt::format("{} has no size: a {} {} must give its size (size = N)", path,
                                     path.substr(path.rfind('.') + 1), words_.table));
  }

  TensorMode tensor_mode(const ConfigValue& value) const {
    if (value.kind == ValueKind::null) return TensorMode::none;
    if (value.kind != ValueKind::string) wrong_type(value, "parallel.tensor.mode", "a string" + or_null());
    // parse_tensor_mode quotes the text it rejects escaped and cut.
    try {
      return parse_tensor_mode(value.text);
    } catch (const ConfigError& error) {
      throw ConfigError(located(source_, value.position, error.what()));
    }
  }
};

}  // namespace

ParallelConfig parallel_config_from_tree(const ConfigValue& root, ConfigFormat format, std::string_view source) {
  return ParallelTableReader(format, source).read(root);
}

}  // namespace pgroups::detail
