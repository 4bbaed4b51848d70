#pragma once
// One rank's part of a `pgroups verify` report, as it travels to every rank: what the
// rank saw of each kind's communicator, its NCCL checks, its node. Typed here, encoded and
// decoded in one place (verify_record.cpp), whichever transport carries it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "job.hpp"
#include "verify_checks.hpp"

namespace pgroups::cli {

/// One kind's NCCL communicator as one rank checked it (member false: the rank holds none).
struct DeviceRecord {
  bool member = false;
  std::int64_t expected = 0;
  std::int64_t actual = 0;
  double create_seconds = 0.0;
};

struct RankRecord {
  double create_seconds = 0.0;  ///< the whole context's creation on this rank
  NodePlace node;
  std::int64_t launcher_local_rank = -1;  ///< -1 where the launcher gives none
  std::string topology_address;           ///< SLURM_TOPOLOGY_ADDR; empty where none
  std::vector<Observation> kinds;         ///< by kind, in creation order
  std::vector<double> kind_seconds;       ///< each kind's creation on this rank
  std::vector<DeviceRecord> device;       ///< by kind; empty without NCCL

  [[nodiscard]] std::string encode() const;
  /// The record `bytes` encodes; BackendError, naming `rank`, for bytes that are none (a
  /// process of another program on the same store).
  [[nodiscard]] static RankRecord decode(std::string_view bytes, int rank);
};

}  // namespace pgroups::cli
