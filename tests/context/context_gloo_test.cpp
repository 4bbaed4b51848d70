// ParallelContext on a bootstrap with the gloo backend (pgroups/context/parallel_context.hpp):
// every kind is a gloo context whose members are the layout's, kinds of one partition
// share one, the one-rank kinds one of this rank alone; the other backends and the MPI
// constructor refuse gloo on every rank alike; a disagreement is a MismatchError on every
// rank. Runs under mpirun over an mpi::MpiBootstrap of the world (the PMIx and env
// bootstraps are run by `pgroups verify --backend gloo` in tests/launch).

#include <gloo/context.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "mpi_test_support.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/gloo/gloo_groups.hpp"
#include "pgroups/launch/callback_bootstrap.hpp"
#include "pgroups/mpi/bootstrap.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

ContextOptions gloo_options() {
  ContextOptions options;
  options.backend = Backend::gloo;
  options.timeout = std::chrono::seconds(30);
  return options;
}

ParallelConfig mesh_of_eight() {
  ParallelConfig config;
  config.mesh = MeshConfig{parse_mesh_dims("tp=2,dp=2,pp=2"), {"tp", "dp", "pp", "tp-dp"}};
  return config;
}

class ParallelContextGloo : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!backend_built(Backend::gloo)) GTEST_SKIP() << "pgroups was built without gloo";
    if (test::world_size() != 8) GTEST_SKIP() << "the mesh needs 8 ranks";
  }
  mpi::MpiBootstrap bootstrap_{mpi::Communicator::borrow(MPI_COMM_WORLD)};
};

TEST_F(ParallelContextGloo, EveryKindIsAGlooContextWhoseMembersAreTheLayouts) {
  ParallelContext context(mesh_of_eight(), bootstrap_, gloo_options());
  EXPECT_EQ(context.backend(), Backend::gloo);
  for (const KindHandle& kind : context.kinds()) {
    const GroupHandle group = context.get_group(kind);
    ASSERT_EQ(group.backend(), Backend::gloo) << kind.name();
    const std::shared_ptr<::gloo::Context> gloo_context = group.gloo();
    EXPECT_EQ(context.get_cpu_group(kind), group);
    EXPECT_EQ(gloo::all_gather(gloo_context, context.global_rank()), context.ranks_in_group(kind)) << kind.name();
  }
  EXPECT_EQ(context.processes_on_node(), bootstrap_.local_size());
  context.destroy();
  EXPECT_FALSE(context.is_initialized("tp"));
}

TEST_F(ParallelContextGloo, KindsOfOnePartitionShareOneContextAndOneRankKindsOneOfTheirOwn) {
  ParallelConfig config;
  config.world_size = 8;
  config.tensor_size = 8;  // data 1 (one-rank groups), model = tensor = global
  const ParallelContext context(config, bootstrap_, gloo_options());
  EXPECT_EQ(context.get_group("model").gloo(), context.get_group("global").gloo());
  EXPECT_EQ(context.get_group("tensor").gloo(), context.get_group("global").gloo());
  EXPECT_EQ(context.get_group("data").gloo()->size, 1);
  EXPECT_EQ(gloo::all_gather(context.get_group("data").gloo(), context.global_rank()),
            std::vector<std::int64_t>{context.global_rank()});
}

TEST_F(ParallelContextGloo, AGlooHandleRefusesToBeReadAsMpi) {
  const ParallelContext context(mesh_of_eight(), bootstrap_, gloo_options());
  EXPECT_EQ(test::message_of<StateError>([&] { (void)context.get_cpu_group("tp").mpi(); }),
            "the group handle of group tp holds a gloo context (backend gloo), not an MPI one; get_cpu_group returns "
            "the MPI communicator whatever the context's backend, when the context was built over MPI");
}

TEST_F(ParallelContextGloo, OtherBackendsOnABootstrapAndGlooOverMpiAreConfigErrorsOnEveryRank) {
  ContextOptions mpi_backend = gloo_options();
  mpi_backend.backend = Backend::mpi;
  EXPECT_EQ(test::message_of<ConfigError>([&] { ParallelContext(mesh_of_eight(), bootstrap_, mpi_backend); }),
            "backend mpi is built over an MPI communicator, not a bootstrap: use ParallelContext(config, MPI_Comm) "
            "(`pgroups verify --bootstrap mpi`), or backend gloo or nccl on the mpi bootstrap");
  EXPECT_EQ(test::message_of<ConfigError>([&] { ParallelContext(mesh_of_eight(), MPI_COMM_WORLD, gloo_options()); }),
            "backend gloo is built over a bootstrap: use ParallelContext(config, bootstrap, options), with an "
            "mpi::MpiBootstrap of the communicator to run it under MPI");
}

// A program's own bootstrap: here the "program" all-gathers over MPI itself, as a user
// would over their launcher's channel; pgroups asks nothing else of it.
std::vector<std::string> all_gather_over_mpi(std::string_view bytes) {
  const int length = static_cast<int>(bytes.size());
  std::vector<int> lengths(static_cast<std::size_t>(test::world_size()));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> gathered;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    gathered.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return gathered;
}

TEST_F(ParallelContextGloo, AProgramsOwnAllGatherIsBootstrapEnough) {
  int calls = 0;
  const std::unique_ptr<Bootstrap> own =
      make_callback_bootstrap(test::world_rank(), test::world_size(), 0, 1,
                              {.all_gather =
                                   [&calls](std::string_view bytes, std::chrono::milliseconds) {
                                     ++calls;
                                     return all_gather_over_mpi(bytes);
                                   },
                               .barrier = {}});
  EXPECT_EQ(own->kind(), BootstrapKind::callback);
  ParallelContext context(mesh_of_eight(), *own, gloo_options());
  for (const KindHandle& kind : context.kinds()) {
    EXPECT_EQ(gloo::all_gather(context.get_group(kind).gloo(), context.global_rank()), context.ranks_in_group(kind));
  }
  // The agreement, every group's addresses, the barrier after the connections: three.
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)make_callback_bootstrap(3, 2, 0, 1, {}); }),
            "rank 3 is not in [0, 2) (size 2)");
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)make_callback_bootstrap(0, 2, 0, 1, {}); }),
            "a callback bootstrap needs an all-gather (BootstrapCallbacks::all_gather)");
}

TEST_F(ParallelContextGloo, ARankThatDisagreesMakesEveryRankThrowTheMismatch) {
  ParallelConfig config = mesh_of_eight();
  if (test::world_rank() == 3) config.seed = 7;
  const std::string message =
      test::message_of<MismatchError>([&] { ParallelContext(config, bootstrap_, gloo_options()); });
  EXPECT_NE(message.find("configuration mismatch across 8 ranks"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 3 holds"), std::string::npos) << message;
}

}  // namespace
}  // namespace pgroups
