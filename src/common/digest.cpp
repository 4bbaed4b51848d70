#include "pgroups/common/digest.hpp"

namespace pgroups {

std::uint64_t text_digest(std::string_view bytes) noexcept {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char ch : bytes) {
    hash ^= static_cast<unsigned char>(ch);
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace pgroups
