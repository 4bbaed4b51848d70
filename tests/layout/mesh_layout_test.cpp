// Layouts of named meshes: every golden-mesh file through Layout, random meshes against a
// brute-force oracle, Megatron's embedding groups, and the mesh rules' messages.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "support/configs.hpp"
#include "support/error_message.hpp"
#include "support/golden.hpp"

namespace pgroups {
namespace {

using test::message_of;

ParallelConfig mesh_config(std::vector<MeshDim> dims, std::vector<std::string> groups, std::int64_t world_size = 0) {
  ParallelConfig config;
  config.world_size = world_size;
  config.mesh = MeshConfig{std::move(dims), std::move(groups)};
  return config;
}

// ---- Golden files ---------------------------------------------------------------------

class MeshLayoutGolden : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(MeshLayoutGolden, EveryTokenIsAKindWithMegatronsGroupsInMegatronsOrder) {
  const nlohmann::json golden = test::load_json(GetParam());
  const auto& config = golden.at("config");
  std::vector<MeshDim> sizes;
  for (const auto& [name, size] : config.at("sizes").items()) sizes.push_back({name, size.get<std::int64_t>()});
  std::vector<std::string> tokens;
  for (const auto& [token, _] : golden.at("modes").items()) tokens.push_back(token);
  const Layout layout(mesh_config(mesh_dims_from_order(config.at("order").get<std::string>(), sizes), tokens,
                                  config.at("world_size").get<std::int64_t>()));
  ASSERT_EQ(layout.group_kinds().size(), tokens.size());
  for (std::size_t kind = 0; kind < tokens.size(); ++kind) {
    const std::string& token = tokens[kind];
    SCOPED_TRACE(token);
    EXPECT_EQ(layout.group_kinds()[kind].name, token);
    EXPECT_FALSE(layout.group_kinds()[kind].mode.has_value());
    const auto& expected = golden.at("modes").at(token);
    const auto groups = expected.at("groups").get<std::vector<std::vector<std::int64_t>>>();
    EXPECT_EQ(layout.groups(kind), groups);  // exactly, order included
    ASSERT_EQ(layout.group_count(kind), static_cast<std::int64_t>(groups.size()));
    const auto local = expected.at("local_rank").get<std::vector<std::int64_t>>();
    const auto size = expected.at("world_size").get<std::vector<std::int64_t>>();
    for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
      const auto r = static_cast<std::size_t>(rank);
      EXPECT_TRUE(layout.is_member(rank, kind));
      EXPECT_EQ(layout.local_rank(rank, kind), local[r]) << "rank " << rank;
      EXPECT_EQ(layout.group_size(kind), size[r]) << "rank " << rank;
      const auto index = static_cast<std::size_t>(layout.group_index(rank, kind));
      EXPECT_EQ(layout.group_of(rank, kind), groups.at(index)) << "rank " << rank;
    }
    // The same dimensions in reverse order name the same kind.
    std::vector<std::string_view> parts = split_group_token(token);
    std::reverse(parts.begin(), parts.end());
    std::string reversed;
    for (std::string_view part : parts) {
      if (!reversed.empty()) reversed += '-';
      reversed += part;
    }
    EXPECT_EQ(layout.find_group_kind(reversed), kind);
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenMeshFiles, MeshLayoutGolden, ::testing::ValuesIn(test::golden_files("golden-mesh")),
                         test::test_name);

// ---- Random meshes against a brute-force oracle ----------------------------------------

struct Oracle {
  std::vector<MeshDim> dims;
  std::int64_t world = 1;

  std::vector<std::int64_t> coords(std::int64_t rank) const {
    std::vector<std::int64_t> c;
    for (const MeshDim& d : dims) {
      c.push_back(rank % d.size);
      rank /= d.size;
    }
    return c;
  }
  // Ranks that agree with `rank` on every dimension outside `varying`, ascending.
  std::vector<std::int64_t> group(std::int64_t rank, const std::set<std::string>& varying) const {
    const auto mine = coords(rank);
    std::vector<std::int64_t> members;
    for (std::int64_t other = 0; other < world; ++other) {
      const auto theirs = coords(other);
      bool same = true;
      for (std::size_t i = 0; i < dims.size(); ++i) {
        if (!varying.contains(dims[i].name) && theirs[i] != mine[i]) same = false;
      }
      if (same) members.push_back(other);
    }
    return members;
  }
  // Every distinct group, ordered by first rank.
  std::vector<std::vector<std::int64_t>> groups(const std::set<std::string>& varying) const {
    std::map<std::int64_t, std::vector<std::int64_t>> by_first;
    for (std::int64_t rank = 0; rank < world; ++rank) {
      auto g = group(rank, varying);
      by_first[g.front()] = g;
    }
    std::vector<std::vector<std::int64_t>> result;
    for (auto& [_, g] : by_first) result.push_back(g);
    return result;
  }
};

TEST(MeshLayoutProperties, RandomMeshesAndTokensMatchABruteForceOracle) {
  std::mt19937_64 rng(20261201);
  const std::vector<std::string> pool = {"tp", "cp", "ep", "dp", "pp", "x"};
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::string> names = pool;
    std::shuffle(names.begin(), names.end(), rng);
    names.resize(std::uniform_int_distribution<std::size_t>(1, 5)(rng));
    Oracle oracle;
    for (const std::string& name : names) {
      oracle.dims.push_back({name, std::uniform_int_distribution<std::int64_t>(1, 4)(rng)});
      oracle.world *= oracle.dims.back().size;
    }
    // Distinct random subsets, each written in a random order inside its token.
    std::vector<std::string> tokens;
    std::vector<std::set<std::string>> varying;
    for (int t = 0; t < 4; ++t) {
      std::vector<std::string> chosen;
      for (const std::string& name : names) {
        if (rng() % 2) chosen.push_back(name);
      }
      if (chosen.empty()) chosen.push_back(names[rng() % names.size()]);
      const std::set<std::string> set(chosen.begin(), chosen.end());
      if (std::find(varying.begin(), varying.end(), set) != varying.end()) continue;
      std::shuffle(chosen.begin(), chosen.end(), rng);
      std::string token;
      for (const std::string& name : chosen) token += (token.empty() ? "" : "-") + name;
      tokens.push_back(token);
      varying.push_back(set);
    }
    const Layout layout(mesh_config(oracle.dims, tokens));
    SCOPED_TRACE(describe(layout.config()));
    ASSERT_EQ(layout.world_size(), oracle.world);
    for (std::size_t kind = 0; kind < tokens.size(); ++kind) {
      SCOPED_TRACE(tokens[kind]);
      const auto expected = oracle.groups(varying[kind]);
      ASSERT_EQ(layout.groups(kind), expected);
      EXPECT_EQ(layout.group_count(kind), static_cast<std::int64_t>(expected.size()));
      EXPECT_EQ(layout.group_size(kind), static_cast<std::int64_t>(expected.front().size()));
      for (std::size_t g = 0; g < expected.size(); ++g) {
        EXPECT_EQ(layout.group_leader(kind, static_cast<std::int64_t>(g)), expected[g].front());
        for (std::size_t i = 0; i < expected[g].size(); ++i) {
          const std::int64_t rank = expected[g][i];
          EXPECT_EQ(layout.group_index(rank, kind), static_cast<std::int64_t>(g));
          EXPECT_EQ(layout.local_rank(rank, kind), static_cast<std::int64_t>(i));
          EXPECT_EQ(layout.group_member(rank, kind, static_cast<std::int64_t>(i)), rank);
          EXPECT_EQ(layout.group_of(rank, kind), expected[g]);
        }
      }
    }
  }
}

TEST(MeshLayoutProperties, EmbeddingGroupsAreTheFirstAndLastRankOfEveryPipelineGroup) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    Oracle oracle;
    for (const char* name : {"tp", "dp", "pp"}) {
      oracle.dims.push_back({name, std::uniform_int_distribution<std::int64_t>(1, 4)(rng)});
      oracle.world *= oracle.dims.back().size;
    }
    std::shuffle(oracle.dims.begin(), oracle.dims.end(), rng);
    const Layout layout(mesh_config(oracle.dims, {"pp", "embd", "pos_embd"}));
    SCOPED_TRACE(describe(layout.config()));
    const std::size_t embd = layout.group_kind_index("embd");
    const std::size_t pos = layout.group_kind_index("pos_embd");
    EXPECT_TRUE(layout.group_kinds()[embd].partial);
    EXPECT_EQ(layout.group_kinds()[embd].dims, std::vector<std::string>{"pp"});
    std::vector<std::vector<std::int64_t>> expected_embd;
    std::vector<std::vector<std::int64_t>> expected_pos;
    for (const auto& pp_group : oracle.groups({"pp"})) {
      expected_pos.push_back({pp_group.front()});
      expected_embd.push_back(pp_group.size() > 1 ? std::vector<std::int64_t>{pp_group.front(), pp_group.back()}
                                                  : std::vector<std::int64_t>{pp_group.front()});
    }
    EXPECT_EQ(layout.groups(embd), expected_embd);
    EXPECT_EQ(layout.groups(pos), expected_pos);
    for (std::int64_t rank = 0; rank < oracle.world; ++rank) {
      const auto pp_group = oracle.group(rank, {"pp"});
      const bool first = rank == pp_group.front();
      const bool last = rank == pp_group.back();
      ASSERT_EQ(layout.is_member(rank, embd), first || last) << rank;
      ASSERT_EQ(layout.is_member(rank, pos), first) << rank;
      if (first || last) {
        const auto& group = expected_embd[static_cast<std::size_t>(layout.group_index(rank, embd))];
        EXPECT_EQ(layout.group_of(rank, embd), group);
        EXPECT_EQ(group[static_cast<std::size_t>(layout.local_rank(rank, embd))], rank);
      } else {
        EXPECT_EQ(message_of<StateError>([&] { (void)layout.local_rank(rank, embd); }),
                  fmt::format("rank {} is in no group of kind 'embd' (only the first and last pipeline stages' "
                              "ranks are)",
                              rank));
      }
    }
  }
}

// ---- Names and defaults ----------------------------------------------------------------

TEST(MeshLayout, KindsKeepTheTokensAsGivenAndAreFoundInAnyOrder) {
  const Layout layout(mesh_config({{"tp", 2}, {"cp", 2}, {"dp", 2}, {"pp", 2}}, {"dp-tp", "tp", "pp-cp-dp"}));
  ASSERT_EQ(layout.group_kinds().size(), 3U);
  EXPECT_EQ(layout.group_kinds()[0].name, "dp-tp");
  EXPECT_EQ(layout.group_kinds()[0].dims, (std::vector<std::string>{"tp", "dp"}));
  EXPECT_EQ(layout.find_group_kind("tp-dp"), 0U);
  EXPECT_EQ(layout.find_group_kind("dp-cp-pp"), 2U);
  EXPECT_EQ(layout.find_group_kind("cp"), std::nullopt);
  EXPECT_EQ(layout.find_group_kind("tp-tp"), std::nullopt);
  EXPECT_TRUE(layout.modes().empty());
  EXPECT_EQ(layout.world_size(), 16);
  EXPECT_EQ(layout.config().world_size, 16);
  EXPECT_EQ(layout.tensor_size(), 2);
  EXPECT_EQ(layout.pipeline_size(), 2);
  EXPECT_EQ(layout.data_parallel_size(), 2);
  EXPECT_EQ(message_of<StateError>([&] { (void)layout.group_kind_index("tpp"); }),
            "group kind 'tpp' is not created for W=16 mesh tp=2,cp=2,dp=2,pp=2 groups dp-tp,tp,pp-cp-dp; the kinds "
            "are: dp-tp, tp, pp-cp-dp (did you mean tp?)");
  EXPECT_EQ(message_of<StateError>([&] { (void)layout.group_size(3); }),
            "group kind index 3 is out of range: W=16 mesh tp=2,cp=2,dp=2,pp=2 groups dp-tp,tp,pp-cp-dp has 3 kinds");
}

TEST(MeshLayout, WithoutGroupsEveryDimensionIsAKindInMeshOrder) {
  const Layout layout(mesh_config({{"tp", 2}, {"dp", 3}}, {}));
  ASSERT_EQ(layout.group_kinds().size(), 2U);
  EXPECT_EQ(layout.group_kinds()[0].name, "tp");
  EXPECT_EQ(layout.group_kinds()[1].name, "dp");
  EXPECT_EQ(layout.groups(1), (std::vector<std::vector<std::int64_t>>{{0, 2, 4}, {1, 3, 5}}));
}

TEST(MeshLayout, CoordinatesAreTheMeshDimensionsSlowestFirst) {
  const Layout layout(mesh_config({{"tp", 2}, {"dp", 3}, {"pp", 2}}, {"tp"}));
  const auto coords = layout.coordinates(9);  // 9 = 1 + 2 * (1 + 3 * 1)
  ASSERT_EQ(coords.size(), 3U);
  EXPECT_EQ(coords[0].name, "pp");
  EXPECT_EQ(coords[0].value, 1);
  EXPECT_EQ(coords[1].name, "dp");
  EXPECT_EQ(coords[1].value, 1);
  EXPECT_EQ(coords[2].name, "tp");
  EXPECT_EQ(coords[2].value, 1);
  EXPECT_EQ(coords[2].size, 2);
}

TEST(PresetLayout, KindsAreTheModesUnderTheirNamesInCreationOrder) {
  ParallelConfig config = test::preset_config(16, 2, 4, TensorMode::tensor_2d);
  const Layout layout(config);
  ASSERT_EQ(layout.group_kinds().size(), layout.modes().size());
  for (std::size_t kind = 0; kind < layout.modes().size(); ++kind) {
    const ParallelMode mode = layout.modes()[kind];
    EXPECT_EQ(layout.group_kinds()[kind].name, mode_name(mode));
    EXPECT_EQ(layout.group_kinds()[kind].mode, mode);
    EXPECT_FALSE(layout.group_kinds()[kind].partial);
    EXPECT_EQ(layout.kind_of(mode), kind);
    EXPECT_EQ(layout.find_group_kind(mode_name(mode)), kind);
    EXPECT_EQ(layout.groups(kind), layout.groups(mode));
  }
  EXPECT_EQ(layout.group_kinds()[layout.kind_of(ParallelMode::tensor_2d_row)].dims, std::vector<std::string>{"row"});
  EXPECT_EQ(layout.find_group_kind("row-col"), std::nullopt);  // presets answer to mode names only
}

// docs/using/meshes.md: every Colossal-AI mode is a token on the preset's mesh (all but the
// legacy sequence_dp blocks).
class PresetAsMesh : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(PresetAsMesh, EveryModeIsTheTokenOfItsDimensionsOnTheSameMesh) {
  const Layout preset(test::config_from_golden(test::load_json(GetParam()).at("config")));
  std::vector<MeshDim> dims(preset.mesh().dims().begin(), preset.mesh().dims().end());
  std::vector<std::string> tokens;
  for (const GroupKind& kind : preset.group_kinds()) {
    std::string token;
    for (const std::string& dim : kind.dims) token += (token.empty() ? "" : "-") + dim;
    tokens.push_back(token);
  }
  // Modes that share dimensions (tensor and 1d) become one token.
  std::vector<std::string> unique;
  for (const std::string& token : tokens) {
    if (std::find(unique.begin(), unique.end(), token) == unique.end()) unique.push_back(token);
  }
  const Layout mesh(mesh_config(dims, unique));
  for (std::size_t kind = 0; kind < tokens.size(); ++kind) {
    SCOPED_TRACE(preset.group_kinds()[kind].name + " = " + tokens[kind]);
    EXPECT_EQ(mesh.groups(mesh.group_kind_index(tokens[kind])), preset.groups(kind));
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenFiles, PresetAsMesh, ::testing::ValuesIn(test::golden_files("golden")), test::test_name);

// ---- Seeds -----------------------------------------------------------------------------

TEST(LayoutSeed, ModesTheLayoutLacksAreAStateError) {
  ParallelConfig config = test::preset_config(8, 1, 2, TensorMode::tensor_1d);
  const Layout layout(config);
  EXPECT_EQ(message_of<StateError>([&] { (void)layout.seed(0, ParallelMode::pipe); }),
            "mode pipe is not created for W=8 pipeline=1 tensor=2 mode=1d; the modes are: global, data, model, "
            "tensor, 1d");
  const Layout mesh(mesh_config({{"tp", 2}, {"dp", 4}}, {"tp"}));
  EXPECT_EQ(message_of<StateError>([&] { (void)mesh.seed(0, ParallelMode::tensor); }),
            "mode tensor is not created for W=8 mesh tp=2,dp=4 groups tp; the modes are: none (a mesh has group "
            "kinds)");
}

TEST(LayoutSeed, TensorSeedIsBasePlusTensorRankPlus1024PerStageOthersTheBase) {
  ParallelConfig config = test::preset_config(48, 3, 8, TensorMode::tensor_2p5d, 2);
  config.seed = 7;
  const Layout layout(config);
  for (std::int64_t rank = 0; rank < 48; ++rank) {
    EXPECT_EQ(layout.seed(rank, ParallelMode::tensor), 7 + rank % 8 + 1024 * ((rank / 8) % 3)) << rank;
    EXPECT_EQ(layout.seed(rank, ParallelMode::data), 7);
    EXPECT_EQ(layout.seed(rank, ParallelMode::tensor_2p5d_dep), 7);
  }
  const Layout mesh(mesh_config({{"tp", 2}, {"pp", 2}}, {"tp", "pp"}));
  EXPECT_EQ(mesh.seed(3, mesh.group_kind_index("tp")), 1024);
  EXPECT_EQ(message_of<ConfigError>([&] { (void)layout.seed(48, ParallelMode::tensor); }),
            "rank 48 is outside the world of 48 ranks (valid: 0..47)");
}

// ---- Rules and their messages ----------------------------------------------------------

std::string mesh_error(std::vector<MeshDim> dims, std::vector<std::string> groups, std::int64_t world = 0) {
  return message_of<ConfigError>([&] { (void)Layout(mesh_config(std::move(dims), std::move(groups), world)); });
}

TEST(MeshLayoutValidation, UnknownDimensionInAGroupSuggestsTheClosestName) {
  EXPECT_EQ(mesh_error({{"tp", 2}, {"dp", 2}, {"pp", 2}}, {"tpp-dp"}),
            "unknown dimension 'tpp' in group 'tpp-dp'; the mesh has tp, dp, pp (did you mean tp?)");
  EXPECT_EQ(mesh_error({{"tp", 2}, {"dp", 2}}, {"tp", "DP"}),
            "unknown dimension 'DP' in group 'DP'; the mesh has tp, dp (did you mean dp?)");
  EXPECT_EQ(mesh_error({{"tp", 2}, {"dp", 2}}, {"cp"}),
            "unknown dimension 'cp' in group 'cp'; the mesh has tp, dp (to name it, add it to the mesh, e.g. cp=1)");
}

TEST(MeshLayoutValidation, ProductDifferentFromTheWorldSizeNamesBoth) {
  EXPECT_EQ(mesh_error({{"tp", 2}, {"cp", 2}, {"dp", 4}, {"pp", 2}}, {"tp"}, 16),
            "world size 16 does not match the mesh tp=2,cp=2,dp=4,pp=2, whose sizes multiply to 32");
}

TEST(MeshLayoutValidation, BadTokensAreRejectedWithTheRule) {
  const std::vector<MeshDim> dims = {{"tp", 2}, {"dp", 2}};
  EXPECT_EQ(mesh_error(dims, {"tp-dp", "dp-tp"}), "group 'dp-tp' repeats group 'tp-dp': both vary the same dimensions");
  EXPECT_EQ(mesh_error(dims, {"tp--dp"}), "group 'tp--dp' has an empty dimension name; write names joined by one '-'");
  EXPECT_EQ(mesh_error(dims, {"tp-tp"}), "dimension 'tp' appears twice in group 'tp-tp'");
  EXPECT_EQ(mesh_error(dims, {""}), "a group token is empty; write dimension names joined by '-', e.g. tp-dp");
  EXPECT_EQ(mesh_error(dims, {"embd"}), "group 'embd' needs a 'pp' dimension in the mesh, which has tp, dp");
}

TEST(MeshLayoutValidation, BadDimensionsAreRejectedWithTheRule) {
  EXPECT_EQ(mesh_error({}, {}), "a mesh needs at least one dimension, e.g. tp=2,dp=4");
  EXPECT_EQ(mesh_error({{"t-p", 2}}, {}),
            "mesh dimension name 't-p' is invalid: names use letters, digits and '_' only");
  EXPECT_EQ(mesh_error({{"embd", 2}}, {}), "mesh dimension name 'embd' is reserved for Megatron's embedding group");
  EXPECT_EQ(mesh_error({{"tp", 2}, {"tp", 2}}, {}), "mesh dimension name 'tp' appears twice");
  EXPECT_EQ(mesh_error({{"tp", 0}}, {}), "mesh dimension 'tp' has size 0, must be a positive integer");
}

// The escaping and cutting of every pgroups message (pgroups/common/printable.hpp), cut at
// 64 bytes here.
TEST(MeshLayoutValidation, UserTextInMessagesIsEscapedAndCut) {
  EXPECT_EQ(mesh_error({{"t\np\x1b", 2}}, {}),
            "mesh dimension name 't\\np\\x1b' is invalid: names use letters, digits and '_' only");
  EXPECT_EQ(mesh_error({{std::string(70, 'x') + "-", 2}}, {}),
            "mesh dimension name '" + std::string(64, 'x') + "...' is invalid: names use letters, digits and '_' only");
}

TEST(MeshLayoutValidation, PresetSettingsCannotBeMixedWithAMesh) {
  ParallelConfig config = mesh_config({{"tp", 2}}, {});
  config.pipeline = 2;
  config.tensor_mode = TensorMode::tensor_1d;
  EXPECT_EQ(message_of<ConfigError>([&] { (void)Layout(config); }),
            "a mesh cannot be combined with pipeline=2, mode=1d: the mesh's dimensions replace pipeline, tensor, "
            "mode and depth");
  EXPECT_EQ(message_of<ConfigError>([&] { validate(config); }),
            "a mesh cannot be combined with pipeline=2, mode=1d: the mesh's dimensions replace pipeline, tensor, "
            "mode and depth");
}

TEST(MeshConfigText, ParsesTheCliSpellingAndMegatronsOrder) {
  EXPECT_EQ(parse_mesh_dims("tp=2,cp=1,dp=4"), (std::vector<MeshDim>{{"tp", 2}, {"cp", 1}, {"dp", 4}}));
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_mesh_dims("tp=2,dp"); }),
            "mesh item 'dp' in 'tp=2,dp' is not NAME=SIZE (e.g. tp=2,dp=4,pp=2)");
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_mesh_dims("tp=two"); }),
            "mesh item 'tp=two' in 'tp=two' has size 'two', which is not a 64-bit integer");
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_mesh_dims("tp=010,dp=2"); }),
            "mesh item 'tp=010' in 'tp=010,dp=2': leading zeros are not allowed in the integer '010'");
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_mesh_dims("tp=0x10"); }),
            "mesh item 'tp=0x10' in 'tp=0x10': only decimal numbers are read, found '0x10'");
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_mesh_dims("tp=99999999999999999999"); }),
            "mesh item 'tp=99999999999999999999' in 'tp=99999999999999999999' has size '99999999999999999999', "
            "which is not a 64-bit integer");
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_mesh_dims("tp=2\n"); }),
            "mesh item 'tp=2\\n' in 'tp=2\\n' has size '2\\n', which is not a 64-bit integer");
  const std::vector<MeshDim> sizes = {{"tp", 2}, {"cp", 1}, {"dp", 3}};
  EXPECT_EQ(mesh_dims_from_order("dp-tp-pp", sizes), (std::vector<MeshDim>{{"dp", 3}, {"tp", 2}, {"pp", 1}}));
  EXPECT_EQ(message_of<ConfigError>([] { (void)mesh_dims_from_order("tp-dp", std::vector<MeshDim>{{"pp", 2}}); }),
            "size pp=2 is given, but 'pp' is not in the order 'tp-dp'; a name missing from the order must have size 1");
  const MeshConfig mesh{{{"tp", 2}, {"dp", 4}}, {"tp", "tp-dp"}};
  EXPECT_EQ(mesh_order(mesh), "tp-dp");
  EXPECT_EQ(describe(mesh), "mesh tp=2,dp=4 groups tp,tp-dp");
}

}  // namespace
}  // namespace pgroups
