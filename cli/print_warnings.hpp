#pragma once
// The CLI's one way to show the report layer's warnings: on stderr, after the output.

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

namespace pgroups::cli {

inline void print_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) fmt::print(stderr, "pgroups: warning: {}\n", warning);
}

}  // namespace pgroups::cli
