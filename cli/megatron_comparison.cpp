#include "megatron_comparison.hpp"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "pgroups/layout/communicator_sharing.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/layout/mesh_config.hpp"

namespace pgroups::cli {
namespace {

// One create_group loop of parallel_state, as a pgroups token on the mesh
// tp, cp, ep, dp, pp, gtp (fastest first; Megatron's decoder `dp` is ep-dp here, its
// expert generator's `dp` is dp; gtp, of size 1, is the gtp_remat axis), and whether a
// gloo copy of each group is made.
struct MegatronKind {
  const char* group_desc;
  const char* token;
  bool gloo;
};

constexpr MegatronKind kMegatronKinds[] = {
    {"GTP_WEIGHT_REMAT_GROUP", "gtp", false},
    {"DATA_PARALLEL_GROUP_WITH_CP", "cp-ep-dp", true},
    {"DATA_PARALLEL_GROUP", "ep-dp", true},
    {"CONTEXT_PARALLEL_GROUP", "cp", false},
    {"MODEL_PARALLEL_GROUP", "tp-pp", false},
    {"TENSOR_MODEL_PARALLEL_GROUP", "tp", false},
    {"PIPELINE_MODEL_PARALLEL_GROUP", "pp", false},
    {"EMBEDDING_GROUP", "embd", false},
    {"POSITION_EMBEDDING_GROUP", "pos_embd", false},
    {"TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP", "tp-cp-ep-dp", false},
    {"TENSOR_AND_DATA_PARALLEL_GROUP", "tp-ep-dp", false},
    {"TENSOR_AND_CONTEXT_PARALLEL_GROUP", "tp-cp", false},
    {"EXPERT_GTP_WEIGHT_REMAT_GROUP", "gtp", false},
    {"EXPERT_MODEL_PARALLEL_GROUP", "ep", false},
    {"EXPERT_TENSOR_PARALLEL_GROUP", "tp", false},
    {"EXPERT_TENSOR_AND_MODEL_PARALLEL_GROUP", "tp-ep", false},
    {"EXPERT_TENSOR_MODEL_PIPELINE_PARALLEL_GROUP", "tp-ep-pp", false},
    {"EXPERT_TENSOR_MODEL_PIPELINE_PARALLEL_GROUP_WITH_EGTP", "tp-ep-pp", false},
    {"EXPERT_DATA_PARALLEL_GROUP", "dp", true},
    {"INTRA_DISTRIBUTED_OPTIMIZER_INSTANCE_GROUP", "tp-cp-ep-dp-pp", false},
};

MegatronComparison compare(std::int64_t tp, std::int64_t ep, std::int64_t dp, std::int64_t pp) {
  const std::string dims = fmt::format("tp={},cp=1,ep={},dp={},pp={},gtp=1", tp, ep, dp / ep, pp);
  // pgroups makes each distinct token once (Megatron's repeated loops are the same groups).
  std::vector<std::string> tokens;
  std::set<std::string> seen;
  for (const MegatronKind& kind : kMegatronKinds) {
    if (seen.insert(kind.token).second) tokens.emplace_back(kind.token);
  }
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims(dims), tokens};
  const Layout layout(config);
  MegatronComparison row;
  row.shape = fmt::format("tp={},cp=1,ep={},dp={},pp={}", tp, ep, dp, pp);
  row.world_size = layout.world_size();
  const std::int64_t first = 0;
  const std::int64_t middle = layout.world_size() / pp;  // stage 1 of pp >= 3
  for (const MegatronKind& kind : kMegatronKinds) {
    const std::size_t index = layout.group_kind_index(kind.token);
    const std::int64_t copies = kind.gloo ? 2 : 1;
    row.megatron_gloo += kind.gloo ? 1 : 0;
    row.megatron_groups_first_stage += layout.is_member(first, index) ? copies : 0;
    row.megatron_groups_middle_stage += layout.is_member(middle, index) ? copies : 0;
    row.megatron_new_group_calls += layout.group_count(index) * copies;
  }
  row.pgroups_created_first_stage = communicator_bill(layout, first).created;
  row.pgroups_created_middle_stage = communicator_bill(layout, middle).created;
  return row;
}

}  // namespace

std::vector<MegatronComparison> megatron_comparisons() { return {compare(8, 1, 16, 8), compare(8, 8, 16, 8)}; }

nlohmann::json megatron_json(const std::vector<MegatronComparison>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const MegatronComparison& row : rows) {
    out.push_back(
        {{"shape", row.shape},
         {"world_size", row.world_size},
         {"megatron_groups_per_rank",
          {{"first_stage", row.megatron_groups_first_stage}, {"middle_stage", row.megatron_groups_middle_stage}}},
         {"megatron_gloo_per_rank", row.megatron_gloo},
         {"megatron_new_group_calls_per_rank", row.megatron_new_group_calls},
         {"pgroups_created_per_rank",
          {{"first_stage", row.pgroups_created_first_stage}, {"middle_stage", row.pgroups_created_middle_stage}}}});
  }
  return out;
}

std::string megatron_text(const std::vector<MegatronComparison>& rows) {
  std::string out = "\nagainst Megatron-LM's parallel_state (defaults, gloo copies included), per rank, W = 1024:\n";
  out += fmt::format("  {:<28} {:>22} {:>14} {:>22}\n", "shape", "megatron groups", "create_group", "pgroups created");
  out += fmt::format("  {:<28} {:>22} {:>14} {:>22}\n", "", "first / middle stage", "calls", "first / middle stage");
  for (const MegatronComparison& row : rows) {
    out += fmt::format("  {:<28} {:>14} / {:<5} {:>14} {:>14} / {:<5}\n", row.shape, row.megatron_groups_first_stage,
                       row.megatron_groups_middle_stage, row.megatron_new_group_calls, row.pgroups_created_first_stage,
                       row.pgroups_created_middle_stage);
  }
  return out;
}

}  // namespace pgroups::cli
