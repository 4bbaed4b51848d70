// The contract of NcclCommunicator and GroupCommunicators that holds without a GPU:
// empty objects, and arguments rejected before any NCCL call or collective.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "pgroups/common/error.hpp"
#include "pgroups/layout/layout.hpp"
#include "pgroups/nccl/communicator.hpp"
#include "pgroups/nccl/group_communicators.hpp"
#include "support/error_message.hpp"

namespace pgroups::nccl {
namespace {

using test::message_of;

const Broadcast kUnusedBroadcast = [](std::span<std::byte>) { FAIL() << "broadcast must not be called"; };

TEST(NcclCommunicatorContract, DefaultIsEmptyAndReleasingIsSafe) {
  NcclCommunicator comm;
  EXPECT_FALSE(comm);
  EXPECT_EQ(comm.get(), nullptr);
  EXPECT_NO_THROW(comm.destroy());
  comm.abort();
  EXPECT_EQ(comm.release(), nullptr);
}

TEST(NcclCommunicatorContract, MovingTransfersTheHandleAndLeavesTheSourceEmpty) {
  // A stand-in handle that is never passed to NCCL: released before destruction.
  const auto fake = reinterpret_cast<ncclComm_t>(std::uintptr_t{0x1000});
  NcclCommunicator a(fake, "data", std::chrono::seconds(1));
  NcclCommunicator b(std::move(a));
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
  EXPECT_EQ(b.get(), fake);
  EXPECT_EQ(b.name(), "data");
  EXPECT_EQ(b.timeout(), std::chrono::seconds(1));
  NcclCommunicator c;
  c = std::move(b);
  EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(c.get(), fake);
  EXPECT_EQ(c.release(), fake);
  EXPECT_FALSE(c);
}

TEST(NcclCommunicatorContract, QueriesOnAnEmptyCommunicatorAreStateErrors) {
  const NcclCommunicator comm;
  EXPECT_THROW((void)comm.size(), StateError);
  EXPECT_THROW((void)comm.rank(), StateError);
  EXPECT_THROW((void)comm.device(), StateError);
  NcclCommunicator empty;
  EXPECT_EQ(message_of<StateError>([&] { empty.wait_ready("ncclCommSplit"); }),
            "ncclCommSplit: waited on an empty NcclCommunicator");
}

TEST(NcclCommunicatorContract, InitRejectsBadSizeAndRankBeforeAnyCollective) {
  EXPECT_EQ(message_of<ConfigError>([] { (void)init_communicator("pipe", 0, 0, kUnusedBroadcast); }),
            "communicator 'pipe' cannot have 0 ranks: NCCL takes sizes in [1, 2147483647]");
  EXPECT_EQ(message_of<ConfigError>([] { (void)create_world(4, 4, kUnusedBroadcast); }),
            "rank 4 is outside communicator 'global' of 4 ranks (valid: 0 to 3)");
  EXPECT_EQ(message_of<ConfigError>([] { (void)create_world(std::int64_t{1} << 40, 0, kUnusedBroadcast); }),
            "communicator 'global' cannot have 1099511627776 ranks: NCCL takes sizes in [1, 2147483647]");
  EXPECT_EQ(message_of<StateError>([] { (void)create_world(2, 0, Broadcast{}); }),
            "communicator 'global' needs a broadcast to share its unique id");
}

TEST(NcclCommunicatorContract, SplitOfAnEmptyParentIsAStateError) {
  NcclCommunicator parent;
  EXPECT_EQ(message_of<StateError>([&] { (void)split_communicator(parent, "data", 0, 0); }),
            "communicator 'data' cannot be split from an empty parent communicator");
}

TEST(NcclGroupCommunicatorsContract, MissingModeIsAStateErrorNamingIt) {
  GroupCommunicators comms;
  EXPECT_TRUE(comms.empty());
  EXPECT_FALSE(comms.contains(ParallelMode::tensor_2d_row));
  EXPECT_EQ(message_of<StateError>([&] { (void)comms.at(ParallelMode::tensor_2d_row); }),
            "there is no NCCL communicator for group 2d_row: it was not created for this rank and configuration");
}

TEST(NcclGroupCommunicatorsContract, HoldsKindsByIndexInCreationOrderOnceEach) {
  GroupCommunicators comms;
  EXPECT_EQ(message_of<StateError>([&] { comms.alias(0, "global", std::nullopt); }),
            "there is no NCCL world communicator: none was created, or it was destroyed");
  comms.add(3, "data", NcclCommunicator(), 1.5);
  comms.alias(1, "tp-dp", 3);
  EXPECT_EQ(comms.names(), (std::vector<std::string>{"data", "tp-dp"}));
  EXPECT_EQ(comms.kinds(), (std::vector<std::size_t>{3, 1}));
  EXPECT_TRUE(comms.contains(1));
  EXPECT_FALSE(comms.contains(2));
  EXPECT_EQ(comms.creation_seconds(ParallelMode::data), 1.5);
  EXPECT_EQ(comms.creation_seconds(1), 0.0);  // the time went to its owner's
  EXPECT_THROW((void)comms.creation_seconds(ParallelMode::pipe), StateError);
  EXPECT_EQ(message_of<StateError>([&] { (void)comms.at(2); }),
            "there is no NCCL communicator for group kind 2: it was not created for this rank and configuration");
  EXPECT_EQ(message_of<StateError>([&] { comms.add(3, "data", NcclCommunicator()); }),
            "an NCCL communicator for group data is already held");
  EXPECT_EQ(message_of<StateError>([&] { comms.alias(4, "dp", 7); }),
            "there is no NCCL communicator for group kind 7: it was not created for this rank and configuration");
  comms.destroy();
  EXPECT_TRUE(comms.empty());
}

TEST(NcclGroupCommunicatorsContract, CreationNeedsAWorld) {
  ParallelConfig config;
  config.world_size = 4;
  const Layout layout(config);
  EXPECT_EQ(message_of<StateError>([&] { (void)create_group_communicators(NcclCommunicator(), layout, 0); }),
            "group communicators need a world communicator, but the one given is empty");
}

}  // namespace
}  // namespace pgroups::nccl
