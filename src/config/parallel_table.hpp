#pragma once
// The one place that turns a value tree into a ParallelConfig: the keys, their types and
// their messages are checked here once for all three formats. Internal to pgroups::config.

#include <string_view>

#include "pgroups/config/config_reader.hpp"
#include "pgroups/layout/parallel_config.hpp"
#include "value_tree.hpp"

namespace pgroups::detail {

/// Reads the `parallel` entry of `root` (the defaults when there is none). Messages name
/// types in `format`'s own words (table, object or dict; null or None). Throws
/// ParseError for a non-table root, an unknown key, a wrong type or an integer outside
/// int64, and ConfigError for an unknown tensor mode; both start with "source:line:col:".
[[nodiscard]] ParallelConfig parallel_config_from_tree(const ConfigValue& root, ConfigFormat format,
                                                       std::string_view source);

}  // namespace pgroups::detail
