// The choice of a bootstrap (pgroups/launch/bootstrap.hpp) from its name and the launch.

#include "pgroups/launch/bootstrap.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/env_bootstrap.hpp"
#include "pgroups/launch/pmix_bootstrap.hpp"
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
  const EnvironmentLookup under_torchrun =
      environment({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}, {"MASTER_ADDR", "127.0.0.1"}});
  EXPECT_EQ(choose_bootstrap(BootstrapKind::automatic, under_torchrun), BootstrapKind::env);
  // A PMIx server launched it (srun --mpi=pmix with MASTER_ADDR exported): the job's own launcher wins.
  const EnvironmentLookup under_srun =
      environment({{"RANK", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"PMIX_NAMESPACE", "17"}, {"PMIX_RANK", "2"}});
  if (bootstrap_built(BootstrapKind::mpi) || bootstrap_built(BootstrapKind::pmix)) {
    EXPECT_NE(choose_bootstrap(BootstrapKind::automatic, under_srun), BootstrapKind::env);
  }
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
  EXPECT_NE(refusal(without(torchrun_worker("29500"), "LOCAL_RANK")).find("needs RANK, WORLD_SIZE, LOCAL_RANK"),
            std::string::npos);
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

}  // namespace
}  // namespace pgroups
