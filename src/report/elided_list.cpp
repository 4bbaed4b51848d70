#include "pgroups/report/elided_list.hpp"

namespace pgroups::report {

std::string elided_list(std::int64_t count, const std::function<std::int64_t(std::int64_t)>& member,
                        std::int64_t keep) {
  std::string text = "[";
  auto append = [&](std::int64_t index) {
    if (text.size() > 1) text += ", ";
    text += std::to_string(member(index));
  };
  if (count <= 2 * keep + 1) {
    for (std::int64_t i = 0; i < count; ++i) append(i);
  } else {
    for (std::int64_t i = 0; i < keep; ++i) append(i);
    text += ", ...";
    for (std::int64_t i = count - keep; i < count; ++i) append(i);
  }
  return text + "]";
}

}  // namespace pgroups::report
