#pragma once
// `bench --model`'s comparison with Megatron-LM (docs/developing/performance.md, "Cost model"): the process groups that
// megatron-core's parallel_state.initialize_model_parallel creates at its defaults
// (num_distributed_optimizer_instances 1, gtp_remat sizes 1, gloo copies on), read from
// its source (NVIDIA/Megatron-LM megatron/core/parallel_state.py, 2026-08), against
// pgroups' created count for the same groups on the same mesh.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace pgroups::cli {

struct MegatronComparison {
  std::string shape;            ///< e.g. "tp=8,cp=1,ep=1,dp=16,pp=8"
  std::int64_t world_size = 0;
  std::int64_t megatron_groups_first_stage = 0;   ///< groups a first-stage rank is a member of (NCCL + gloo)
  std::int64_t megatron_groups_middle_stage = 0;
  std::int64_t megatron_gloo = 0;                 ///< of them, gloo copies
  std::int64_t megatron_new_group_calls = 0;      ///< create_group calls every rank makes
  std::int64_t pgroups_created_first_stage = 0;   ///< pgroups' bill, created (MPI; as many NCCL)
  std::int64_t pgroups_created_middle_stage = 0;
};

/// The dense shape (tp 8, pp 8, dp 16, cp 1, ep 1) and a MoE one (ep 8), W = 1024.
[[nodiscard]] std::vector<MegatronComparison> megatron_comparisons();
[[nodiscard]] nlohmann::json megatron_json(const std::vector<MegatronComparison>& rows);
[[nodiscard]] std::string megatron_text(const std::vector<MegatronComparison>& rows);

}  // namespace pgroups::cli
