// The choice of a bootstrap (pgroups/launch/bootstrap.hpp) from its name and the launch.

#include "pgroups/launch/bootstrap.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "pgroups/common/error.hpp"
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
  for (const BootstrapKind kind : {BootstrapKind::automatic, BootstrapKind::mpi, BootstrapKind::pmix}) {
    EXPECT_EQ(parse_bootstrap(bootstrap_name(kind)), kind);
  }
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)parse_bootstrap("pmi2"); }),
            "bootstrap 'pmi2' is unknown: it is one of auto, mpi, pmix");
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

TEST(Bootstrap, PmixWithoutAServerIsRefusedBeforePmixIsAsked) {
  if (!bootstrap_built(BootstrapKind::pmix)) {
    EXPECT_THROW((void)make_pmix_bootstrap(environment({})), ConfigError);
    return;
  }
  EXPECT_EQ(test::message_of<ConfigError>([] { (void)make_pmix_bootstrap(environment({})); }),
            "--bootstrap pmix needs a launcher with a PMIx server (srun --mpi=pmix, Open MPI's mpirun): this process "
            "has no PMIX_NAMESPACE or PMIX_RANK in its environment");
}

}  // namespace
}  // namespace pgroups
