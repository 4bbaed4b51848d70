#pragma once
/// \file
/// Long lists in text output: the first and last members with the middle elided, so that
/// a group of any size prints in bounded time.

#include <cstdint>
#include <functional>
#include <string>

namespace pgroups::report {

/// "[0, 1, 2, ..., 14, 15]": `member(i)` for each position i in [0, count), the middle
/// elided past `keep` * 2 + 1 members. Calls `member` O(min(count, 2 * keep)) times.
[[nodiscard]] std::string elided_list(std::int64_t count, const std::function<std::int64_t(std::int64_t)>& member,
                                      std::int64_t keep = 4);

}  // namespace pgroups::report
