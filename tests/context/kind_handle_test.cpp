// KindHandle on a live world: a kind looked up once answers every query as its name does,
// for every kind of presets and meshes (the trivial pipeline included), and a handle
// that is not this live context's is refused, naming the kind.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"

namespace pgroups {
namespace {

// What a query answers, or the message it throws: so that a query that throws for a name
// must throw the same for the handle.
template <typename Query>
std::string outcome(Query query) {
  try {
    return fmt::format("{}", query());
  } catch (const Error& error) {
    return fmt::format("threw {}", error.what());
  }
}

std::string text(const Neighbour& n) { return fmt::format("{}/{}", n.global_rank, n.local_rank); }
std::string text(const GroupHandle& h) { return fmt::format("{}:{}", h.group(), MPI_Comm_c2f(h.mpi())); }

void expect_handle_answers_as_name(const ParallelContext& context, const std::string& name) {
  SCOPED_TRACE(name);
  const KindHandle kind = context.kind(name);
  EXPECT_EQ(outcome([&] { return context.is_member(kind); }), outcome([&] { return context.is_member(name); }));
  EXPECT_EQ(outcome([&] { return context.local_rank(kind); }), outcome([&] { return context.local_rank(name); }));
  EXPECT_EQ(outcome([&] { return context.world_size(kind); }), outcome([&] { return context.world_size(name); }));
  EXPECT_EQ(outcome([&] { return text(context.get_group(kind)); }),
            outcome([&] { return text(context.get_group(name)); }));
  EXPECT_EQ(outcome([&] { return text(context.get_cpu_group(kind)); }),
            outcome([&] { return text(context.get_cpu_group(name)); }));
  EXPECT_EQ(outcome([&] { return fmt::format("{}", context.ranks_in_group(kind)); }),
            outcome([&] { return fmt::format("{}", context.ranks_in_group(name)); }));
  EXPECT_EQ(outcome([&] { return text(context.next_rank(kind)); }),
            outcome([&] { return text(context.next_rank(name)); }));
  EXPECT_EQ(outcome([&] { return text(context.prev_rank(kind)); }),
            outcome([&] { return text(context.prev_rank(name)); }));
  EXPECT_EQ(outcome([&] { return context.next_global_rank(kind); }),
            outcome([&] { return context.next_global_rank(name); }));
  EXPECT_EQ(outcome([&] { return context.prev_global_rank(kind); }),
            outcome([&] { return context.prev_global_rank(name); }));
  EXPECT_EQ(outcome([&] { return context.is_first_rank(kind); }), outcome([&] { return context.is_first_rank(name); }));
  EXPECT_EQ(outcome([&] { return context.is_last_rank(kind); }), outcome([&] { return context.is_last_rank(name); }));
  EXPECT_EQ(outcome([&] { return context.seed(kind); }), outcome([&] { return context.seed(name); }));
  EXPECT_EQ(outcome([&] { return context.creation_seconds(kind); }),
            outcome([&] { return context.creation_seconds(name); }));
  EXPECT_EQ(outcome([&] { return context.device_creation_seconds(kind); }),
            outcome([&] { return context.device_creation_seconds(name); }));
}

std::vector<std::pair<std::string, ParallelConfig>> layouts() {
  std::vector<std::pair<std::string, ParallelConfig>> result;
  for (const ParallelConfig& config : test::configs_for_world(test::world_size())) {
    result.emplace_back(describe(config), config);
  }
  ParallelConfig embeddings;
  embeddings.mesh = MeshConfig{.dims = {{"pp", test::world_size()}}, .groups = {"pp", "embd", "pos_embd"}};
  result.emplace_back("mesh with embedding groups", embeddings);
  ParallelConfig no_pipeline;
  no_pipeline.mesh = MeshConfig{.dims = {{"tp", 1}, {"dp", test::world_size()}}, .groups = {"tp", "dp", "tp-dp"}};
  result.emplace_back("mesh without pp", no_pipeline);
  return result;
}

TEST(KindHandle, EveryKindAnswersByHandleAsByNameForPresetsAndMeshes) {
  for (const auto& [label, config] : layouts()) {
    SCOPED_TRACE(label);
    const ParallelContext context(config, MPI_COMM_WORLD);
    for (const std::string& name : context.kind_names()) expect_handle_answers_as_name(context, name);
    // The pipeline is asked for by name also where there is none (a group of this rank).
    const std::string pipeline(context.layout().pipeline_name());
    if (!context.is_initialized(pipeline)) expect_handle_answers_as_name(context, pipeline);
  }
}

TEST(KindHandle, AKindIsFoundByItsDimensionsInAnyOrderAndNamedCanonically) {
  ParallelConfig config;
  config.mesh = MeshConfig{.dims = {{"tp", 1}, {"dp", test::world_size()}}, .groups = {"tp", "tp-dp"}};
  const ParallelContext context(config, MPI_COMM_WORLD);
  const KindHandle reversed = context.kind("dp-tp");
  EXPECT_EQ(reversed.name(), "tp-dp");
  EXPECT_EQ(reversed.index(), 1U);
  EXPECT_EQ(reversed, context.kind("tp-dp"));
  EXPECT_EQ(context.kind("pp").index(), std::nullopt) << "the trivial pipeline is no kind of the layout";
}

TEST(KindHandle, AnUnknownNameThrowsTheStateErrorOfTheQueries) {
  const ParallelContext context(test::richest_config(), MPI_COMM_WORLD);
  std::string by_kind;
  std::string by_query;
  try {
    (void)context.kind("tensr");
  } catch (const StateError& error) {
    by_kind = error.what();
  }
  try {
    (void)context.local_rank("tensr");
  } catch (const StateError& error) {
    by_query = error.what();
  }
  EXPECT_NE(by_kind.find("'tensr'"), std::string::npos) << by_kind;
  EXPECT_EQ(by_kind, by_query);
}

TEST(KindHandle, AHandleOfAnotherContextIsRefusedNamingTheKind) {
  const ParallelContext first(test::richest_config(), MPI_COMM_WORLD);
  const ParallelContext second(test::richest_config(), MPI_COMM_WORLD);
  const KindHandle global = first.kind(ParallelMode::global);
  try {
    (void)second.local_rank(global);
    FAIL() << "no exception";
  } catch (const StateError& error) {
    EXPECT_STREQ(error.what(),
                 "the handle of group global belongs to another context (or to one since destroyed): "
                 "ask this context for it, kind(\"global\")");
  }
  EXPECT_EQ(second.local_rank(second.kind(ParallelMode::global)), test::world_rank());
}

TEST(KindHandle, AHandleAfterDestroyIsRefusedAndAMoveTakesItsHandlesAlong) {
  ParallelContext first(test::richest_config(), MPI_COMM_WORLD);
  const KindHandle global = first.kind("global");
  ParallelContext second = std::move(first);
  EXPECT_EQ(second.local_rank(global), test::world_rank()) << "the moved-to context holds the same communicators";
  try {
    (void)first.local_rank(global);  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
    FAIL() << "no exception";
  } catch (const StateError& error) {
    EXPECT_STREQ(error.what(), "group global is not initialized: the context was destroyed (or moved from)");
  }
  second.destroy();
  try {
    (void)second.get_group(global);
    FAIL() << "no exception";
  } catch (const StateError& error) {
    EXPECT_STREQ(error.what(), "group global is not initialized: the context was destroyed (or moved from)");
  }
  // A context built after it gets communicators of its own: the old handle stays refused.
  const ParallelContext third(test::richest_config(), MPI_COMM_WORLD);
  EXPECT_THROW((void)third.is_member(global), StateError);
}

}  // namespace
}  // namespace pgroups
