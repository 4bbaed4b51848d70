#pragma once
/// \file
/// The rank map file of `--rank-map FILE` and Python's `rank_map=` path: a JSON file holding
/// the map itself (`[3, 0, 1, 2]`) or an object with a `rank_map` key (so that the JSON
/// `pgroups place --format json` prints can be given as it is; its other keys are not read).
/// Entry r is the launcher rank that runs mesh rank r (pgroups/layout/rank_map.hpp).

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace pgroups {

/// Parses the text of a rank map file; `source` names it in messages. Throws ParseError
/// "source:line:column: ..." for invalid JSON, "source: ..." for a top level that is neither
/// an array nor an object with `rank_map`, and "source: rank_map[i] must be an integer, found
/// ..." for an entry that is not a 64-bit integer. Whether it is a permutation of the world
/// is Layout's check. O(size).
[[nodiscard]] std::vector<std::int64_t> parse_rank_map(std::string_view text, std::string_view source);

/// Reads the file (read_config_file's IoErrors, at most 64 MiB) and parses it.
[[nodiscard]] std::vector<std::int64_t> read_rank_map_file(const std::filesystem::path& path);

}  // namespace pgroups
