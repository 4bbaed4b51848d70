// The choice of a bootstrap (pgroups/launch/bootstrap.hpp) from its name and the launch.

#include "pgroups/launch/bootstrap.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/env_bootstrap.hpp"
#include "pgroups/launch/env_launch.hpp"
#include "pgroups/launch/pmix_bootstrap.hpp"
#include "pgroups/launch/tcp_store.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

EnvironmentLookup environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    const auto found = variables.find(std::string(name));
    return found == variables.end() ? std::nullopt : std::optional(found->second);
  };
}

TEST(Bootstrap, EachNameParsesToItsKindAndAnUnknownOneIsAConfigErrorNamingThem) {
  for (const BootstrapKind kind :
       {BootstrapKind::automatic, BootstrapKind::mpi, BootstrapKind::pmix, BootstrapKind::env}) {
    EXPECT_EQ(parse_bootstrap(bootstrap_name(kind)), kind);
  }
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)parse_bootstrap("pmi2"); }),
            "bootstrap 'pmi2' is unknown: it is one of auto, mpi, pmix, env");
}

TEST(Bootstrap, APmixServerIsPresentOnlyWithItsNamespaceAndRank) {
  EXPECT_TRUE(pmix_server_present(environment({{"PMIX_NAMESPACE", "17"}, {"PMIX_RANK", "0"}})));
  EXPECT_FALSE(pmix_server_present(environment({{"PMIX_RANK", "0"}})));
  EXPECT_FALSE(pmix_server_present(environment({})));
}

TEST(Bootstrap, AutomaticIsMpiWhenBuiltElsePmixUnderAPmixServer) {
  const EnvironmentLookup under_pmix = environment({{"PMIX_NAMESPACE", "17"}, {"PMIX_RANK", "3"}});
  if (bootstrap_built(BootstrapKind::mpi)) {
    EXPECT_EQ(choose_bootstrap(BootstrapKind::automatic, under_pmix), BootstrapKind::mpi);
  } else if (bootstrap_built(BootstrapKind::pmix)) {
    EXPECT_EQ(choose_bootstrap(BootstrapKind::automatic, under_pmix), BootstrapKind::pmix);
    EXPECT_THROW((void)choose_bootstrap(BootstrapKind::automatic, environment({})), ConfigError);
  }
  for (const BootstrapKind kind : built_bootstraps()) EXPECT_EQ(choose_bootstrap(kind, environment({})), kind);
}

TEST(Bootstrap, AutomaticIsTheEnvironmentsUnderTorchrunWhereMpiWouldBeAWorldOfOne) {
  const EnvironmentLookup under_torchrun = environment({{"RANK", "2"},
                                                        {"WORLD_SIZE", "4"},
                                                        {"LOCAL_RANK", "2"},
                                                        {"LOCAL_WORLD_SIZE", "4"},
                                                        {"MASTER_ADDR", "127.0.0.1"},
                                                        {"MASTER_PORT", "29500"}});
  EXPECT_EQ(choose_bootstrap(BootstrapKind::automatic, under_torchrun), BootstrapKind::env);
  // A PMIx server launched it (srun --mpi=pmix with MASTER_ADDR exported): the job's own launcher wins.
  const EnvironmentLookup under_srun =
      environment({{"RANK", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"PMIX_NAMESPACE", "17"}, {"PMIX_RANK", "2"}});
  if (bootstrap_built(BootstrapKind::mpi) || bootstrap_built(BootstrapKind::pmix)) {
    EXPECT_NE(choose_bootstrap(BootstrapKind::automatic, under_srun), BootstrapKind::env);
  }
}

TEST(Bootstrap, AutomaticRefusesAnEnvironmentLaunchTheEnvBootstrapWouldRefuseNamingTheVariable) {
  // One rule for "an env launch": what auto chooses, the env bootstrap accepts.
  std::map<std::string, std::string> launch = {
      {"RANK", "5"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}};
  EXPECT_EQ(
      test::message_of<ConfigError>([&] { (void)choose_bootstrap(BootstrapKind::automatic, environment(launch)); }),
      "RANK 5 is not below WORLD_SIZE 4: a rank is in 0..WORLD_SIZE-1");
  launch.erase("WORLD_SIZE");
  launch.erase("MASTER_PORT");
  EXPECT_EQ(
      test::message_of<ConfigError>([&] { (void)choose_bootstrap(BootstrapKind::automatic, environment(launch)); }),
      "RANK and MASTER_ADDR are set, as in an environment launch, but WORLD_SIZE, MASTER_PORT are not: an "
      "environment launch gives RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT");
}

TEST(Bootstrap, AutomaticChoosesAnEnvironmentLaunchWithoutLocalRank) {
  const EnvironmentLookup by_hand =
      environment({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}});
  EXPECT_EQ(choose_bootstrap(BootstrapKind::automatic, by_hand), BootstrapKind::env);
  const EnvLaunch launch = read_env_launch(by_hand);
  EXPECT_EQ(launch.rank, 1);
  EXPECT_EQ(launch.world_size, 4);
  EXPECT_FALSE(launch.local_rank.has_value());
}

TEST(EnvLaunch, ValuesPastWhatARankHoldsAreRefusedNamingTheVariableNeverNarrowed) {
  auto refusal = [](std::map<std::string, std::string> variables) {
    variables.emplace("MASTER_ADDR", "127.0.0.1");
    variables.emplace("MASTER_PORT", "29500");
    return test::message_of<ConfigError>([&] { (void)read_env_launch(environment(variables)); });
  };
  // 2^32 + 1 would narrow to a world of 1 in an int.
  EXPECT_EQ(refusal({{"RANK", "0"}, {"WORLD_SIZE", "4294967297"}}),
            "WORLD_SIZE 4294967297 is no world size: it must be in 1..2147483647");
  EXPECT_EQ(refusal({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
            "WORLD_SIZE 0 is no world size: it must be in 1..2147483647");
  EXPECT_NE(refusal({{"RANK", "-1"}, {"WORLD_SIZE", "4"}}).find("RANK='-1' is malformed"), std::string::npos);
  EXPECT_EQ(refusal({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "2"}}),
            "LOCAL_RANK 2 is not below LOCAL_WORLD_SIZE 2: a local rank is in 0..LOCAL_WORLD_SIZE-1");
  EXPECT_EQ(refusal({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "8"}, {"LOCAL_RANK", "0"}}),
            "LOCAL_WORLD_SIZE 8 is no node size: it must be in 1..WORLD_SIZE (4)");
  EXPECT_NE(refusal({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"TORCHELASTIC_RESTART_COUNT", "x"}})
                .find("TORCHELASTIC_RESTART_COUNT='x' is malformed"),
            std::string::npos);
}

TEST(Bootstrap, PmixWithoutAServerIsRefusedBeforePmixIsAsked) {
  if (!bootstrap_built(BootstrapKind::pmix)) {
    EXPECT_THROW((void)make_pmix_bootstrap(environment({})), ConfigError);
    return;
  }
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)make_pmix_bootstrap(environment({})); }),
            "--bootstrap pmix needs a launcher with a PMIx server (srun --mpi=pmix, Open MPI's mpirun): this process "
            "has no PMIX_NAMESPACE or PMIX_RANK in its environment");
}

std::map<std::string, std::string> torchrun_worker(std::string port) {
  return {{"RANK", "1"},
          {"WORLD_SIZE", "2"},
          {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "2"},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", std::move(port)},
          {"TORCHELASTIC_USE_AGENT_STORE", "True"}};
}

TEST(EnvBootstrap, EachMissingOrMalformedVariableIsAConfigErrorNamingIt) {
  using namespace std::chrono_literals;
  auto refusal = [](std::map<std::string, std::string> variables) {
    return test::message_of<ConfigError>([&] { (void)make_env_bootstrap(1s, environment(variables)); });
  };
  auto without = [](std::map<std::string, std::string> variables, const std::string& name) {
    variables.erase(name);
    return variables;
  };
  EXPECT_EQ(refusal(without(torchrun_worker("29500"), "MASTER_ADDR")),
            "the env bootstrap needs MASTER_ADDR (the TCP store's host), which is not set");
  EXPECT_EQ(refusal(torchrun_worker("70000")), "MASTER_PORT 70000 is no TCP port: it must be in 1..65535");
  EXPECT_EQ(refusal(without(torchrun_worker("29500"), "LOCAL_RANK")),
            "LOCAL_WORLD_SIZE is set but LOCAL_RANK is not: give both (torchrun does) or neither (the env bootstrap "
            "then counts the ranks of each host)");
  auto bad_rank = torchrun_worker("29500");
  bad_rank["RANK"] = "x";
  EXPECT_NE(refusal(bad_rank).find("RANK"), std::string::npos);
}

TEST(EnvBootstrap, AStoreNobodyServesIsABackendErrorWithinTheTimeout) {
  using namespace std::chrono_literals;
  // Port 1 on the loopback: nothing listens, every connection is refused.
  const auto start = std::chrono::steady_clock::now();
  const std::string message =
      test::message_of<BackendError>([] { (void)make_env_bootstrap(300ms, environment(torchrun_worker("1"))); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_NE(message.find("cannot reach the TCP store at 127.0.0.1:1 within 0.3 s"), std::string::npos) << message;
}

// `size` env bootstraps as threads against the store at `port` (torchrun's agent's role:
// no rank serves), each running `job` on its own; the first error, if any, is rethrown.
// `restart_count` gives each rank's TORCHELASTIC_RESTART_COUNT (its agent's own count).
void run_ranks(
    int size, std::uint16_t port, const std::function<void(Bootstrap&)>& job,
    const std::function<int(int)>& restart_count = [](int) { return 0; }) {
  std::vector<std::thread> ranks;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    std::map<std::string, std::string> variables = {{"RANK", std::to_string(r)},
                                                    {"WORLD_SIZE", std::to_string(size)},
                                                    {"MASTER_ADDR", "127.0.0.1"},
                                                    {"MASTER_PORT", std::to_string(port)},
                                                    {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                                    {"TORCHELASTIC_RESTART_COUNT", std::to_string(restart_count(r))}};
    ranks.emplace_back([&, r, variables] {
      try {
        using namespace std::chrono_literals;
        const std::unique_ptr<Bootstrap> bootstrap = make_env_bootstrap(10s, environment(variables));
        job(*bootstrap);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

TEST(EnvBootstrap, ARoundOfAnotherWorldSizeWithTheSameRestartCountNeverReadsTheFirstRoundsKeys) {
  using namespace std::chrono_literals;
  // An elastic job: a round of 4 ranks, then one of 2 in the same store under the same
  // TORCHELASTIC_RESTART_COUNT, as torchrun keeps it when a round changes its size.
  TcpStoreServer store(0);
  run_ranks(4, store.port(), [](Bootstrap& bootstrap) {
    EXPECT_EQ(bootstrap.all_gather("first" + std::to_string(bootstrap.rank()), 10s, "round one").size(), 4U);
  });
  std::vector<std::vector<std::string>> seen(2);
  run_ranks(2, store.port(), [&](Bootstrap& bootstrap) {
    seen[static_cast<std::size_t>(bootstrap.rank())] =
        bootstrap.all_gather("second" + std::to_string(bootstrap.rank()), 10s, "round two");
  });
  for (const std::vector<std::string>& gathered : seen) {
    EXPECT_EQ(gathered, (std::vector<std::string>{"second0", "second1"}));
  }
}

// torchrun keeps the restart count per agent: after a worker of node 1 failed, node 1's
// agent counts 1 and node 0's, restarted for the new membership, still 0. The ranks of
// that attempt are one job all the same, and the dead attempt's keys are not theirs.
TEST(EnvBootstrap, RanksWhoseAgentsCountRestartsDifferentlyMeetInOneAttempt) {
  using namespace std::chrono_literals;
  TcpStoreServer store(0);
  run_ranks(4, store.port(), [](Bootstrap& bootstrap) {
    (void)bootstrap.all_gather("dead" + std::to_string(bootstrap.rank()), 10s, "the attempt that failed");
  });
  std::vector<std::vector<std::string>> seen(4);
  run_ranks(
      4, store.port(),
      [&](Bootstrap& bootstrap) {
        seen[static_cast<std::size_t>(bootstrap.rank())] =
            bootstrap.all_gather("new" + std::to_string(bootstrap.rank()), 10s, "the restarted attempt");
      },
      [](int rank) { return rank < 2 ? 0 : 1; });
  for (const std::vector<std::string>& gathered : seen) {
    EXPECT_EQ(gathered, (std::vector<std::string>{"new0", "new1", "new2", "new3"}));
  }
}

// The barrier goes by a counter; a rank that never comes is still named.
TEST(EnvBootstrap, ABarrierEndsOnceEveryRankCameAndNamesTheRankThatDidNot) {
  using namespace std::chrono_literals;
  TcpStoreServer store(0);
  std::vector<std::vector<std::string>> seen(3);
  run_ranks(3, store.port(), [&](Bootstrap& bootstrap) {
    bootstrap.barrier(10s, "the first barrier");
    seen[static_cast<std::size_t>(bootstrap.rank())] =
        bootstrap.all_gather(std::to_string(bootstrap.rank()), 10s, "the gather after it");
  });
  for (const std::vector<std::string>& gathered : seen) {
    EXPECT_EQ(gathered, (std::vector<std::string>{"0", "1", "2"}));
  }
  std::vector<std::string> messages(3);
  run_ranks(3, store.port(), [&](Bootstrap& bootstrap) {
    if (bootstrap.rank() == 2) return;
    messages[static_cast<std::size_t>(bootstrap.rank())] =
        test::message_of<TimeoutError>([&] { bootstrap.barrier(300ms, "the barrier rank 2 skips"); });
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(messages[static_cast<std::size_t>(r)].find("at the barrier rank 2 skips"), std::string::npos)
        << messages[static_cast<std::size_t>(r)];
    EXPECT_NE(messages[static_cast<std::size_t>(r)].find("rank 2 did not arrive"), std::string::npos)
        << messages[static_cast<std::size_t>(r)];
  }
}

// By counters: nothing but the verdict where every rank gave the same bytes, every rank's
// bytes where they differ, and a rank that never came named.
TEST(EnvBootstrap, AnAllGatherIfDifferingGathersOnlyWhereTheRanksDiffer) {
  using namespace std::chrono_literals;
  TcpStoreServer store(0);
  std::vector<std::optional<std::vector<std::string>>> same(3);
  std::vector<std::optional<std::vector<std::string>>> different(3);
  run_ranks(3, store.port(), [&](Bootstrap& bootstrap) {
    const auto r = static_cast<std::size_t>(bootstrap.rank());
    same[r] = bootstrap.all_gather_if_differing("x", 10s, "the same bytes");
    different[r] = bootstrap.all_gather_if_differing(r == 1 ? "y" : "x", 10s, "rank 1's own bytes");
  });
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_FALSE(same[r].has_value()) << r;
    ASSERT_TRUE(different[r].has_value()) << r;
    EXPECT_EQ(*different[r], (std::vector<std::string>{"x", "y", "x"}));
  }
  std::vector<std::string> messages(3);
  run_ranks(3, store.port(), [&](Bootstrap& bootstrap) {
    if (bootstrap.rank() == 2) return;
    messages[static_cast<std::size_t>(bootstrap.rank())] = test::message_of<TimeoutError>(
        [&] { (void)bootstrap.all_gather_if_differing("x", 300ms, "the agreement rank 2 skips"); });
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(messages[static_cast<std::size_t>(r)].find("rank 2 did not arrive"), std::string::npos)
        << messages[static_cast<std::size_t>(r)];
  }
}

// The root's bytes reach every rank; a root that never comes is named.
TEST(EnvBootstrap, ABroadcastGivesEveryRankTheRootsBytesAndNamesAMissingRoot) {
  using namespace std::chrono_literals;
  TcpStoreServer store(0);
  std::vector<std::string> received(3);
  run_ranks(3, store.port(), [&](Bootstrap& bootstrap) {
    received[static_cast<std::size_t>(bootstrap.rank())] =
        bootstrap.broadcast("from " + std::to_string(bootstrap.rank()), 1, 10s, "the broadcast");
  });
  EXPECT_EQ(received, std::vector<std::string>(3, "from 1"));
  std::vector<std::string> messages(3);
  run_ranks(3, store.port(), [&](Bootstrap& bootstrap) {
    if (bootstrap.rank() == 2) return;
    messages[static_cast<std::size_t>(bootstrap.rank())] =
        test::message_of<TimeoutError>([&] { (void)bootstrap.broadcast("x", 2, 300ms, "the broadcast rank 2 skips"); });
  });
  EXPECT_NE(messages[0].find("rank 2 did not arrive"), std::string::npos) << messages[0];
}

// What `from` sends `to` in the exchange tests.
std::string sent(std::int64_t from, std::int64_t to) { return std::to_string(from) + ">" + std::to_string(to); }

// This rank's share of a group: to each member what sent() says.
GroupShare share_of(std::string name, const std::vector<std::int64_t>& members, int rank) {
  GroupShare share{std::move(name), members, {}};
  for (const std::int64_t member : members) share.to_each.push_back(member == rank ? "" : sent(rank, member));
  return share;
}

// Each member gets what each peer sent it alone, and a group waits for its own members
// only: with rank 3 away, the pair {0, 1} completes, and rank 2 is told rank 3 is missing.
TEST(EnvBootstrap, AnExchangeGivesEachMemberWhatItsPeersSentItAndWaitsForNoOtherGroup) {
  using namespace std::chrono_literals;
  TcpStoreServer store(0);
  std::vector<std::vector<std::vector<std::string>>> received(4);
  run_ranks(4, store.port(), [&](Bootstrap& bootstrap) {
    const int r = bootstrap.rank();
    const std::int64_t first = r - r % 2;
    received[static_cast<std::size_t>(r)] = bootstrap.exchange(
        {share_of("pair" + std::to_string(first), {first, first + 1}, r), share_of("all", {3, 2, 1, 0}, r)}, 10s,
        "the exchange");
  });
  for (int r = 0; r < 4; ++r) {
    const std::int64_t first = r - r % 2;
    const std::vector<std::string> pair = {first == r ? "" : sent(first, r), first + 1 == r ? "" : sent(first + 1, r)};
    EXPECT_EQ(received[static_cast<std::size_t>(r)][0], pair);
    std::vector<std::string> all;
    for (const std::int64_t from : {3, 2, 1, 0}) all.push_back(from == r ? "" : sent(from, r));
    EXPECT_EQ(received[static_cast<std::size_t>(r)][1], all);
  }
  std::vector<std::string> messages(4);
  run_ranks(4, store.port(), [&](Bootstrap& bootstrap) {
    const int r = bootstrap.rank();
    if (r == 3) return;
    const std::int64_t first = r - r % 2;
    messages[static_cast<std::size_t>(r)] = test::message_of<TimeoutError>([&] {
      (void)bootstrap.exchange({share_of("pair" + std::to_string(first), {first, first + 1}, r)}, 1s,
                               "the exchange rank 3 skips");
    });
  });
  EXPECT_EQ(messages[0], "no exception") << "rank 0's group does not hold rank 3";
  EXPECT_EQ(messages[1], "no exception");
  EXPECT_NE(messages[2].find("rank 3 did not arrive"), std::string::npos) << messages[2];
}

TEST(Bootstrap, TorchrunInsideAPmixLaunchIsAnEnvironmentLaunch) {
  // torchrun started by srun --mpi=pmix or mpirun: its workers inherit the agent's PMIx
  // (and Open MPI's) variables, which name the agent's process, not theirs.
  const EnvironmentLookup worker = environment({{"RANK", "5"},
                                                {"WORLD_SIZE", "8"},
                                                {"LOCAL_RANK", "1"},
                                                {"LOCAL_WORLD_SIZE", "4"},
                                                {"GROUP_RANK", "1"},
                                                {"TORCHELASTIC_RUN_ID", "job7"},
                                                {"MASTER_ADDR", "127.0.0.1"},
                                                {"MASTER_PORT", "29500"},
                                                {"PMIX_NAMESPACE", "17"},
                                                {"PMIX_RANK", "1"},
                                                {"OMPI_COMM_WORLD_RANK", "1"},
                                                {"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_EQ(choose_bootstrap(BootstrapKind::automatic, worker), BootstrapKind::env);
}

TEST(EnvBootstrap, WithoutLocalRankTheNodeIsTheRanksOfOneHostName) {
  TcpStoreServer store(0);
  std::vector<std::pair<int, int>> node(3);
  run_ranks(3, store.port(), [&](Bootstrap& bootstrap) {
    node[static_cast<std::size_t>(bootstrap.rank())] = {bootstrap.local_rank(), bootstrap.local_size()};
  });
  // Threads of one process: one host name, so one node of three.
  EXPECT_EQ(node, (std::vector<std::pair<int, int>>{{0, 3}, {1, 3}, {2, 3}}));
}

}  // namespace
}  // namespace pgroups
