#pragma once
/// \file
/// VirtualPipeline: Megatron-LM's virtual pipeline (the interleaved schedule) as one rank
/// sees it: how many model chunks each pipeline stage holds, and which one the rank is
/// running. Per-rank state, no communication. ParallelContext and pgroups.torch's groups
/// both hold one, so that its rules and their messages exist once.

#include <cstdint>
#include <optional>

namespace pgroups {

class VirtualPipeline {
 public:
  /// The number of chunks per stage; nullopt for no virtual pipeline. ConfigError
  /// ("virtual pipeline size 0 is invalid: it must be a positive integer") below 1. A
  /// rank at or past the new size becomes 0.
  void set_size(std::optional<std::int64_t> size);
  /// The chunk this rank is running. ConfigError for a negative rank, or one at or past
  /// the size when a size is set, naming the rank and the size.
  void set_rank(std::int64_t rank);

  [[nodiscard]] std::optional<std::int64_t> size() const noexcept { return size_; }
  [[nodiscard]] std::int64_t rank() const noexcept { return rank_; }
  /// Whether the rank runs the first (last) chunk of its stage: always, without a
  /// virtual pipeline. A first (last) pipeline stage is Megatron's first (last) stage only
  /// while it runs that chunk.
  [[nodiscard]] bool runs_first_chunk() const noexcept { return !size_ || rank_ == 0; }
  [[nodiscard]] bool runs_last_chunk() const noexcept { return !size_ || rank_ == *size_ - 1; }

 private:
  std::optional<std::int64_t> size_;
  std::int64_t rank_ = 0;
};

}  // namespace pgroups
