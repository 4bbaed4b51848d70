// The creation logic of pgroups::nccl against a scripted NCCL (fake_nccl.hpp), one
// rank of a large layout at a time: the colour and key of every split, the per-group
// path, polling through ncclInProgress, timeouts and errors that abort everything
// created, and teardown in reverse creation order. No GPU, no MPI.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fake_nccl.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/nccl/communicator.hpp"
#include "pgroups/nccl/group_communicators.hpp"
#include "support/error_message.hpp"

namespace pgroups::nccl {
namespace {

using namespace std::chrono_literals;

using test::message_of;

// Counts calls; the bytes must be exactly one ncclUniqueId.
struct CountingBroadcast {
  int* calls;
  void operator()(std::span<std::byte> bytes) const {
    EXPECT_EQ(bytes.size(), sizeof(ncclUniqueId));
    ++*calls;
  }
};

Layout layout_2d() {
  ParallelConfig config;
  config.world_size = 16;
  config.pipeline = 2;
  config.tensor_size = 4;
  config.tensor_mode = TensorMode::tensor_2d;
  return Layout(config);
}

std::vector<ParallelMode> split_modes(const Layout& layout) {
  std::vector<ParallelMode> modes;
  for (ParallelMode mode : layout.modes()) {
    if (mode != ParallelMode::global) modes.push_back(mode);
  }
  return modes;
}

// A script whose n-th split yields the layout's group of `rank` in the n-th mode.
fake_nccl::Script layout_script(const Layout& layout, std::int64_t rank) {
  fake_nccl::Script script;
  script.split_shape = [modes = split_modes(layout), &layout, rank](int call, int, int) {
    const ParallelMode mode = modes.at(static_cast<std::size_t>(call));
    return std::pair{static_cast<int>(layout.group_size(mode)), static_cast<int>(layout.local_rank(rank, mode))};
  };
  return script;
}

TEST(NcclFakeWorld, RankZeroMakesTheIdEveryRankReceivesIt) {
  fake_nccl::reset();
  int broadcasts = 0;
  NcclCommunicator comm = create_world(4, 0, CountingBroadcast{&broadcasts});
  EXPECT_EQ(fake_nccl::record().unique_ids, 1);
  EXPECT_EQ(broadcasts, 1);
  EXPECT_EQ(comm.size(), 4);
  EXPECT_EQ(comm.rank(), 0);

  fake_nccl::reset();
  NcclCommunicator other = create_world(4, 3, CountingBroadcast{&broadcasts});
  EXPECT_EQ(fake_nccl::record().unique_ids, 0);
  EXPECT_EQ(broadcasts, 2);
  EXPECT_EQ(other.rank(), 3);
}

TEST(NcclFakeWorld, NonBlockingByDefaultAndWaitsThroughInProgress) {
  fake_nccl::reset({.polls_in_progress = 5});
  int broadcasts = 0;
  NcclCommunicator comm = create_world(1, 0, CountingBroadcast{&broadcasts});
  ASSERT_EQ(fake_nccl::record().creations.size(), 1u);
  EXPECT_EQ(fake_nccl::record().creations[0].blocking, 0);
  EXPECT_TRUE(comm);
}

TEST(NcclFakeWorld, AZeroTimeoutMeansNoTimeoutNotAnImmediateOne) {
  // As everywhere in pgroups: 0 waits as long as it takes, through every in-progress poll.
  fake_nccl::reset({.polls_in_progress = 5});
  int broadcasts = 0;
  NcclCommunicator comm = create_world(1, 0, CountingBroadcast{&broadcasts}, {.timeout = 0ms});
  EXPECT_TRUE(comm);
  EXPECT_NO_THROW(comm.destroy());
  EXPECT_TRUE(fake_nccl::record().live.empty());
}

TEST(NcclFakeWorld, BlockingOptionSetsTheConfig) {
  fake_nccl::reset();
  int broadcasts = 0;
  NcclCommunicator comm = create_world(1, 0, CountingBroadcast{&broadcasts}, {.nonblocking = false});
  EXPECT_EQ(fake_nccl::record().creations.at(0).blocking, 1);
}

TEST(NcclFakeWorld, InitThatNeverCompletesTimesOutAndIsAborted) {
  fake_nccl::reset({.never_ready = true});
  int broadcasts = 0;
  EXPECT_EQ(
      message_of<TimeoutError>([&] { (void)create_world(2, 1, CountingBroadcast{&broadcasts}, {.timeout = 20ms}); }),
      "timed out after 0.02 s waiting for all ranks at ncclCommInitRankConfig of communicator 'global' (rank 1 "
      "of 2); the communicator was aborted");
  EXPECT_EQ(fake_nccl::record().teardown, (std::vector<std::string>{"abort 1"}));
  EXPECT_TRUE(fake_nccl::record().live.empty());
}

TEST(NcclFakeWorld, AsynchronousErrorIsABackendErrorAndAborts) {
  fake_nccl::reset({.outcome = ncclRemoteError});
  int broadcasts = 0;
  EXPECT_EQ(message_of<BackendError>([&] { (void)create_world(2, 0, CountingBroadcast{&broadcasts}); }),
            "ncclCommInitRankConfig of communicator 'global' (rank 0 of 2) failed: ncclRemoteError: fake error "
            "string; NCCL's last error: fake last error");
  EXPECT_EQ(fake_nccl::record().teardown, (std::vector<std::string>{"abort 1"}));
}

TEST(NcclFakeWorld, DestroyFinalizesFirstAndWaits) {
  fake_nccl::reset();
  int broadcasts = 0;
  NcclCommunicator comm = create_world(1, 0, CountingBroadcast{&broadcasts});
  comm.destroy();
  EXPECT_FALSE(comm);
  EXPECT_EQ(fake_nccl::record().teardown, (std::vector<std::string>{"finalize 1", "destroy 1"}));
}

TEST(NcclFakeWorld, DestructorDestroysAndAbortDoesNotFinalize) {
  fake_nccl::reset();
  int broadcasts = 0;
  {
    NcclCommunicator comm = create_world(1, 0, CountingBroadcast{&broadcasts});
  }
  NcclCommunicator aborted = create_world(1, 0, CountingBroadcast{&broadcasts});
  aborted.abort();
  EXPECT_EQ(fake_nccl::record().teardown, (std::vector<std::string>{"finalize 1", "destroy 1", "abort 2"}));
}

TEST(NcclFakeModes, OneSplitPerModeWithGroupIndexAndLocalRank) {
  const Layout layout = layout_2d();
  for (std::int64_t rank : {0, 5, 11, 15}) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    fake_nccl::reset(layout_script(layout, rank));
    int broadcasts = 0;
    GroupCommunicators comms = create_group_communicators(
        NcclCommunicator(create_world(16, rank, CountingBroadcast{&broadcasts})), layout, rank);
    std::vector<std::string> names;
    for (ParallelMode mode : layout.modes()) names.emplace_back(mode_name(mode));
    EXPECT_EQ(comms.names(), names);

    const std::vector<fake_nccl::Creation>& creations = fake_nccl::record().creations;
    const std::vector<ParallelMode> modes = split_modes(layout);
    ASSERT_EQ(creations.size(), modes.size() + 1);  // the world, then one split per mode
    for (std::size_t i = 0; i < modes.size(); ++i) {
      const fake_nccl::Creation& split = creations[i + 1];
      EXPECT_EQ(split.call, "split");
      EXPECT_EQ(split.colour, layout.group_index(rank, modes[i])) << mode_name(modes[i]);
      EXPECT_EQ(split.key, layout.local_rank(rank, modes[i])) << mode_name(modes[i]);
      EXPECT_EQ(split.split_share, 1);
      EXPECT_EQ(split.blocking, 0);
      EXPECT_EQ(comms.at(modes[i]).size(), layout.group_size(modes[i]));
      EXPECT_EQ(comms.at(modes[i]).name(), mode_name(modes[i]));
      EXPECT_GE(comms.creation_seconds(modes[i]), 0.0);
    }
    EXPECT_EQ(broadcasts, 1);  // only the world's id travels; splits need none
  }
}

TEST(NcclFakeModes, SplitShareCanBeTurnedOff) {
  const Layout layout = layout_2d();
  fake_nccl::reset(layout_script(layout, 0));
  int broadcasts = 0;
  GroupCommunicators comms = create_group_communicators(create_world(16, 0, CountingBroadcast{&broadcasts}), layout, 0,
                                                        {.split_share = false});
  EXPECT_EQ(fake_nccl::record().creations.at(1).split_share, 0);
}

TEST(NcclFakeModes, TeardownGoesInReverseCreationOrder) {
  const Layout layout = layout_2d();
  fake_nccl::reset(layout_script(layout, 6));
  int broadcasts = 0;
  {
    GroupCommunicators comms =
        create_group_communicators(create_world(16, 6, CountingBroadcast{&broadcasts}), layout, 6);
  }
  std::vector<std::string> expected;
  for (int id = static_cast<int>(layout.modes().size()); id >= 1; --id) {
    expected.push_back("finalize " + std::to_string(id));
    expected.push_back("destroy " + std::to_string(id));
  }
  EXPECT_EQ(fake_nccl::record().teardown, expected);
  EXPECT_TRUE(fake_nccl::record().live.empty());
}

TEST(NcclFakeModes, FailedSplitAbortsTheWorldAndEverySplitSoFar) {
  const Layout layout = layout_2d();
  fake_nccl::Script script = layout_script(layout, 3);
  script.split_return = [](int call) { return call == 2 ? ncclInvalidUsage : ncclSuccess; };
  fake_nccl::reset(script);
  int broadcasts = 0;
  const std::string message = message_of<BackendError>(
      [&] { (void)create_group_communicators(create_world(16, 3, CountingBroadcast{&broadcasts}), layout, 3); });
  EXPECT_EQ(message.rfind("ncclCommSplit of communicator 'pipe' from 'global' (colour ", 0), 0u) << message;
  EXPECT_NE(message.find("failed: ncclInvalidUsage: fake error string"), std::string::npos) << message;
  // data (id 2) and model (id 3) were split, then the world (id 1): all aborted, none
  // finalized, so that no rank waits in a teardown collective.
  EXPECT_EQ(fake_nccl::record().teardown, (std::vector<std::string>{"abort 3", "abort 2", "abort 1"}));
  EXPECT_TRUE(fake_nccl::record().live.empty());
}

TEST(NcclFakeModes, SplitTimeoutNamesTheModeAndAbortsEverything) {
  const Layout layout = layout_2d();
  fake_nccl::reset(layout_script(layout, 0));
  int broadcasts = 0;
  NcclCommunicator world = create_world(16, 0, CountingBroadcast{&broadcasts});
  fake_nccl::Script stuck = layout_script(layout, 0);
  stuck.never_ready = true;
  fake_nccl::set_script(stuck);
  const std::string message = message_of<TimeoutError>(
      [&] { (void)create_group_communicators(std::move(world), layout, 0, {.timeout = 10ms}); });
  EXPECT_EQ(message,
            "timed out after 0.01 s waiting for all ranks at ncclCommSplit of communicator 'data' from 'global' "
            "(colour 0, key 0); the communicator was aborted");
  EXPECT_TRUE(fake_nccl::record().live.empty());
}

TEST(NcclFakeModes, GroupOfTheWrongSizeIsReported) {
  const Layout layout = layout_2d();
  fake_nccl::Script script;
  script.split_shape = [](int, int, int key) { return std::pair{3, key}; };
  fake_nccl::reset(script);
  int broadcasts = 0;
  EXPECT_EQ(message_of<BackendError>([&] {
              (void)create_group_communicators(create_world(16, 9, CountingBroadcast{&broadcasts}), layout, 9);
            }),
            "the NCCL communicator of group data has 3 ranks with this process at rank 1, but the layout puts it at "
            "local rank 1 of a group of 2");
  EXPECT_TRUE(fake_nccl::record().live.empty());
}

TEST(NcclFakeModes, WorldThatIsNotTheLayoutsIsRejectedBeforeAnySplit) {
  const Layout layout = layout_2d();
  fake_nccl::reset();
  int broadcasts = 0;
  EXPECT_EQ(message_of<ConfigError>([&] {
              (void)create_group_communicators(create_world(8, 2, CountingBroadcast{&broadcasts}), layout, 2);
            }),
            "the world communicator has 8 ranks and this process is its rank 2, but the layout is for 16 ranks and "
            "rank 2");
  EXPECT_EQ(fake_nccl::record().creations.size(), 1u);
  EXPECT_EQ(fake_nccl::record().teardown, (std::vector<std::string>{"abort 1"}));
}

TEST(NcclFakeModes, PerGroupPathBroadcastsOverEachModesGroupInOrder) {
  const Layout layout = layout_2d();
  const std::int64_t rank = 5;
  fake_nccl::reset();
  int broadcasts = 0;
  std::vector<std::string> broadcast_modes;
  GroupCommunicators comms =
      create_group_communicators(create_world(16, rank, CountingBroadcast{&broadcasts}), layout, rank,
                                 {.use_split = false}, [&](std::size_t kind, std::span<std::byte> bytes) {
                                   EXPECT_EQ(bytes.size(), sizeof(ncclUniqueId));
                                   broadcast_modes.push_back(layout.group_kinds()[kind].name);
                                 });
  const std::vector<ParallelMode> modes = split_modes(layout);
  std::vector<std::string> names;
  for (ParallelMode mode : modes) names.emplace_back(mode_name(mode));
  EXPECT_EQ(broadcast_modes, names);
  const std::vector<fake_nccl::Creation>& creations = fake_nccl::record().creations;
  ASSERT_EQ(creations.size(), modes.size() + 1);
  int leaders = 0;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    EXPECT_EQ(creations[i + 1].call, "init");
    EXPECT_EQ(creations[i + 1].nranks, layout.group_size(modes[i])) << mode_name(modes[i]);
    EXPECT_EQ(creations[i + 1].rank, layout.local_rank(rank, modes[i])) << mode_name(modes[i]);
    if (layout.local_rank(rank, modes[i]) == 0) ++leaders;
  }
  // Only a group's leader (local rank 0) makes its unique id; rank 5 is not the world's.
  EXPECT_EQ(fake_nccl::record().unique_ids, leaders);
  EXPECT_EQ(comms.size(), layout.modes().size());
}

TEST(NcclFakeModes, PerGroupPathWithoutABroadcastFailsBeforeAnyCollective) {
  const Layout layout = layout_2d();
  fake_nccl::reset();
  int broadcasts = 0;
  EXPECT_EQ(message_of<StateError>([&] {
              (void)create_group_communicators(create_world(16, 0, CountingBroadcast{&broadcasts}), layout, 0,
                                               {.use_split = false});
            }),
            "group communicators are to be created per group (use_split = false), which needs a group broadcast; "
            "none was given");
  EXPECT_EQ(fake_nccl::record().creations.size(), 1u);
  EXPECT_TRUE(fake_nccl::record().live.empty());
}

}  // namespace
}  // namespace pgroups::nccl
