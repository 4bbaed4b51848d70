#include "pgroups/layout/partition_key.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pgroups {

PartitionKey partition_key_of(const Mesh& mesh, DimMask varying, PartitionKey::Pick pick) {
  PartitionKey key;
  key.world_size = mesh.size();
  const auto dims = mesh.dims();
  // Dimensions of one rank neither start nor end a run: skipping them, a varying dimension
  // right after a varying one continues its run (its stride is the run's end).
  bool in_run = false;
  for (std::size_t dim = 0; dim < dims.size(); ++dim) {
    if (dims[dim].size == 1) continue;
    const bool varies = (varying >> dim & 1U) != 0;
    if (varies && in_run) {
      key.runs.back().second *= dims[dim].size;
    } else if (varies) {
      key.runs.emplace_back(mesh.stride(dim), dims[dim].size);
    }
    in_run = varies;
  }
  std::int64_t size = 1;
  for (const auto& run : key.runs) size *= run.second;
  const bool keeps_all = size == 1 || (pick == PartitionKey::Pick::first_and_last && size == 2);
  key.pick = keeps_all ? PartitionKey::Pick::all : pick;
  return key;
}

std::string PartitionKey::text() const {
  std::vector<std::string> parts;
  for (const auto& [stride, extent] : runs) parts.push_back(fmt::format("{}x{}", stride, extent));
  const char* picked = pick == Pick::all ? "all" : pick == Pick::first ? "first" : "first_and_last";
  std::string text =
      fmt::format("W={} runs={} {}", world_size,
                  parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, ",")), picked);
  if (rank_map != 0) text += fmt::format(" map={:016x}", rank_map);
  return text;
}

}  // namespace pgroups
