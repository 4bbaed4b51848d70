// The named-mesh half of PlanOptions: two spellings of one MeshConfig.

#include <fmt/format.h>

#include <array>

#include "integer_option.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/layout/mesh_config.hpp"
#include "plan_options.hpp"

namespace pgroups::cli {
namespace {
constexpr const char* kMeshGroup = "Named mesh (instead of --pipeline/--tensor/--mode)";
// Megatron-LM's default `order` for its RankGenerator.
constexpr std::string_view kMegatronOrder = "tp-cp-ep-dp-pp";
}  // namespace

void PlanOptions::add_mesh_to(CLI::App& app) {
  mesh_option_ = app.add_option("--mesh", mesh_,
                                "Mesh dimensions in rank order, fastest first: NAME=SIZE,... e.g. tp=2,cp=2,dp=4,pp=2")
                     ->group(kMeshGroup);
  app.add_option("--group", groups_,
                 "A group kind to build on the mesh: dimension names joined by '-' (tp-dp), or embd / pos_embd "
                 "(Megatron's embedding groups); repeat it or separate by ','. Default: one per dimension")
      ->group(kMeshGroup);
  order_option_ = app.add_option("--order", order_,
                                 "Megatron-LM's spelling: dimension names fastest first (default tp-cp-ep-dp-pp "
                                 "when a size flag is given); sizes from --tp/--cp/--ep/--dp/--pp, 1 when absent")
                      ->group(kMeshGroup);
  tp_option_ = add_integer_option(app, "--tp", tp_, "Tensor-parallel size of the --order mesh")->group(kMeshGroup);
  cp_option_ = add_integer_option(app, "--cp", cp_, "Context-parallel size of the --order mesh")->group(kMeshGroup);
  ep_option_ = add_integer_option(app, "--ep", ep_, "Expert-parallel size of the --order mesh")->group(kMeshGroup);
  dp_option_ = add_integer_option(app, "--dp", dp_,
                                  "Data-parallel size of the --order mesh (default: world size / the other sizes)")
                   ->group(kMeshGroup);
  pp_option_ = add_integer_option(app, "--pp", pp_, "Pipeline-parallel size of the --order mesh")->group(kMeshGroup);
}

void PlanOptions::apply_mesh(ConfigOverrides& overrides) const {
  const std::array<std::pair<const CLI::Option*, MeshDim>, 5> size_flags = {{
      {tp_option_, {"tp", tp_}},
      {cp_option_, {"cp", cp_}},
      {ep_option_, {"ep", ep_}},
      {dp_option_, {"dp", dp_}},
      {pp_option_, {"pp", pp_}},
  }};
  std::vector<MeshDim> sizes;
  std::vector<std::string> size_names;
  for (const auto& [option, dim] : size_flags) {
    if (option->count()) {
      sizes.push_back(dim);
      size_names.push_back("--" + dim.name);
    }
  }
  const bool megatron = order_option_->count() > 0 || !sizes.empty();
  if (mesh_option_->count() && megatron) {
    const std::string other = order_option_->count() ? std::string("--order") : size_names.front();
    throw ConfigError(
        fmt::format("--mesh {} cannot be combined with {}: both describe the mesh; give --mesh "
                    "NAME=SIZE,... or --order with --tp/--cp/--ep/--dp/--pp",
                    mesh_, other));
  }
  if (mesh_option_->count()) {
    overrides.mesh = parse_mesh_dims(mesh_);
  } else if (megatron) {
    const std::string_view order = order_option_->count() ? std::string_view(order_) : kMegatronOrder;
    std::vector<MeshDim> dims = mesh_dims_from_order(order, sizes);
    // As Megatron does, the data-parallel size is what the world leaves over: merge_config
    // sets it once the world size is known (the flag's, the file's or the job's).
    if (!dp_option_->count()) overrides.rest_dimension = "dp";
    overrides.mesh = std::move(dims);
  }
  if (!groups_.empty()) {
    // Split here, not by CLI11 (which drops empty items): `--group tp,,dp` holds an
    // empty token, an error as `--group ''` is (Layout's rule).
    std::vector<std::string> tokens;
    for (const std::string& given : groups_) {
      std::size_t start = 0;
      for (;;) {
        const std::size_t comma = given.find(',', start);
        tokens.push_back(given.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    overrides.groups = std::move(tokens);
  }
}

}  // namespace pgroups::cli
