#include "value_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "../common/did_you_mean.hpp"
#include "pgroups/common/error.hpp"

namespace pgroups::detail {

bool is_misspelled_parallel(std::string_view key) {
  // Cheap first: only words of 6 to 12 letters can be close enough to "parallel", so a
  // file of millions of other keys costs one length test each.
  if (key.size() < 6 || key.size() > 12 || key == kParallelKey || key == kMeshKey) return false;
  const auto same_letter = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  if (std::equal(key.begin(), key.end(), kParallelKey.begin(), kParallelKey.end(), same_letter)) return true;
  constexpr std::string_view kCandidates[] = {kParallelKey};
  return closest_match(key, kCandidates).has_value();
}

std::string located(std::string_view source, SourcePosition position, std::string_view message) {
  if (position.line == 0) return fmt::format("{}: {}", source, message);
  return fmt::format("{}:{}:{}: {}", source, position.line, position.column, message);
}

void throw_parse_error(std::string_view source, SourcePosition position, std::string_view message) {
  throw ParseError(located(source, position, message));
}

const ConfigEntry* ConfigValue::find(std::string_view key) const {
  for (const ConfigEntry& entry : entries) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

void ValueTreeBuilder::key(std::string_view key, SourcePosition position) {
  pending_key_.assign(key);
  pending_key_position_ = position;
}

void ValueTreeBuilder::scalar(ConfigValue value) {
  if (ConfigValue* node = place_value(value.position)) *node = std::move(value);
}

void ValueTreeBuilder::begin(ValueKind container, SourcePosition position) {
  if (open_.size() >= kMaxNesting) {
    throw_parse_error(source_, position, fmt::format("nesting is deeper than {} levels", kMaxNesting));
  }
  std::string path;
  if (!open_.empty() && open_.back().keeps_entries) {
    path = open_.back().path.empty() ? pending_key_ : open_.back().path + "." + pending_key_;
  }
  ConfigValue* node = place_value(position);
  if (node) node->kind = container;
  const bool in_cluster =
      (open_.size() == 1 && pending_key_ == kClusterKey) || (!open_.empty() && open_.back().in_cluster);
  // Depth 1 is the top level, 2 `parallel`, 3 `parallel.tensor`: nothing deeper can hold
  // a setting, so deeper tables are kept as a kind alone. An array directly under a kept
  // table (`mesh.groups`) keeps its elements. A cluster's levels and host lists nest deeper.
  const bool keeps_entries = node != nullptr && (container == ValueKind::table || container == ValueKind::array) &&
                             open_.size() < (in_cluster ? kMaxClusterDepth : 3);
  std::size_t cap = in_cluster ? kMaxClusterValues : kMaxKeptEntries;
  if (container == ValueKind::array && path == "parallel.rank_map") cap = kMaxRankMapEntries;
  open_.push_back(Frame{node, keeps_entries, keeps_entries ? std::move(path) : std::string(), cap, in_cluster});
}

void ValueTreeBuilder::end() {
  if (open_.empty()) throw std::logic_error("ValueTreeBuilder::end without an open container");
  open_.pop_back();
}

ConfigValue ValueTreeBuilder::finish() {
  if (!has_root_ || !open_.empty()) throw std::logic_error("ValueTreeBuilder::finish on an incomplete document");
  return std::move(root_);
}

ConfigValue* ValueTreeBuilder::place_value(SourcePosition position) {
  if (open_.empty()) {
    if (has_root_) throw std::logic_error("ValueTreeBuilder: a second top-level value");
    has_root_ = true;
    root_.position = position;
    return &root_;
  }
  const Frame& parent = open_.back();
  if (!parent.keeps_entries) return nullptr;
  std::vector<ConfigEntry>& entries = parent.node->entries;
  // Only two top-level entries hold settings. One other key is kept, bare, to be named:
  // in a file of pgroups' settings alone the first one, which is a mistake; in a training
  // config, which holds many unrelated settings, a misspelling of `parallel`, which would
  // otherwise silently give the defaults.
  if (open_.size() == 1 && pending_key_ != kParallelKey && pending_key_ != kMeshKey && pending_key_ != kClusterKey) {
    if (!other_key_kept_ && (others_ == OtherTopLevelKeys::refused || is_misspelled_parallel(pending_key_))) {
      other_key_kept_ = true;
      ConfigEntry& kept = entries.emplace_back(ConfigEntry{pending_key_, pending_key_position_, ConfigValue{}});
      kept.value.position = position;
    }
    return nullptr;
  }
  // A kept container counts all its entries, kept or not, so that a reader can tell
  // that some were dropped.
  ++parent.node->integer;
  if (parent.in_cluster && ++cluster_values_ > kMaxClusterValues) {
    throw_parse_error(source_, position, fmt::format("cluster holds more than {} values", kMaxClusterValues));
  }
  if (parent.node->kind == ValueKind::array) {
    if (entries.size() >= parent.cap) return nullptr;
    entries.push_back(ConfigEntry{std::string(), position, ConfigValue{}});
    entries.back().value.position = position;
    return &entries.back().value;
  }
  for (const ConfigEntry& entry : entries) {
    if (entry.key == pending_key_) {
      const std::string where = parent.path.empty() ? std::string() : " in " + parent.path;
      throw_parse_error(source_, pending_key_position_,
                        fmt::format("duplicate key {}{} (first at line {}, column {})", quoted_excerpt(pending_key_),
                                    where, entry.key_position.line, entry.key_position.column));
    }
  }
  // Past this many distinct keys a table must hold unknown ones among those kept (a
  // table has at most five known keys), so it is rejected all the same; dropping the
  // rest bounds memory against a hostile file of millions of keys.
  if (entries.size() >= parent.cap) return nullptr;
  entries.push_back(ConfigEntry{pending_key_, pending_key_position_, ConfigValue{}});
  ConfigValue& value = entries.back().value;
  value.position = position;
  return &value;
}

}  // namespace pgroups::detail
