// Config text -> validation -> the layout of every rank. Input: a format byte, then the
// text. Whatever validates must give every group kind a partition of the world (of its
// members, for embd/pos_embd) into ascending groups with local rank = position; any
// violation aborts, which libFuzzer reports.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "pgroups/layout/layout.hpp"

namespace {

// Worlds above this are valid but would make one input take seconds.
constexpr std::int64_t kMaxFuzzedWorld = 4096;

void check(bool condition) {
  if (!condition) std::abort();
}

void check_every_rank(const pgroups::Layout& layout) {
  const std::int64_t w = layout.world_size();
  for (std::size_t kind = 0; kind < layout.group_kinds().size(); ++kind) {
    std::vector<int> seen(static_cast<std::size_t>(w), 0);
    std::int64_t previous_leader = -1;
    for (const auto& group : layout.groups(kind)) {
      check(static_cast<std::int64_t>(group.size()) == layout.group_size(kind));
      check(group.front() > previous_leader);
      previous_leader = group.front();
      for (std::size_t i = 0; i < group.size(); ++i) {
        check(i == 0 || group[i - 1] < group[i]);
        check(layout.local_rank(group[i], kind) == static_cast<std::int64_t>(i));
        ++seen[static_cast<std::size_t>(group[i])];
      }
    }
    // A partial kind (embd) leaves some ranks out; every other kind is a partition.
    for (std::int64_t rank = 0; rank < w; ++rank) {
      check(seen[static_cast<std::size_t>(rank)] == (layout.is_member(rank, kind) ? 1 : 0));
      check(layout.group_kinds()[kind].partial || layout.is_member(rank, kind));
    }
  }
}

// The number of ranks of a mesh, or -1 past int64.
std::int64_t mesh_product(const pgroups::MeshConfig& mesh) {
  std::int64_t product = 1;
  for (const pgroups::MeshDim& dim : mesh.dims) {
    if (dim.size < 1) return 1;  // invalid: Layout rejects it cheaply
    if (__builtin_mul_overflow(product, dim.size, &product)) return -1;
  }
  return product;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto format = static_cast<pgroups::ConfigFormat>(data[0] % 3);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    pgroups::ParallelConfig config = pgroups::parse_config(text, format, "<fuzz>");
    if (config.mesh) {
      const std::int64_t product = mesh_product(*config.mesh);
      if (product < 0 || product > kMaxFuzzedWorld) return 0;
    } else if (config.world_size == 0 &&
               __builtin_mul_overflow(config.pipeline, config.tensor_size, &config.world_size)) {
      return 0;
    }
    if (config.world_size > kMaxFuzzedWorld) return 0;
    const pgroups::Layout layout(config);
    check_every_rank(layout);
  } catch (const pgroups::Error&) {
  }
  return 0;
}
