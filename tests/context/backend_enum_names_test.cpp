// The enums of the MPI layers (creation strategy, backend) hold to the rule of every
// pgroups enum: a value that is no enumerator is a ConfigError naming the number. Pure
// name lookups: no MPI call is made.

#include <gtest/gtest.h>

#include "pgroups/common/error.hpp"
#include "pgroups/context/backend.hpp"
#include "pgroups/mpi/creation_strategy.hpp"
#include "support/error_message.hpp"

namespace pgroups {
namespace {

using test::message_of;

TEST(CliEnumNames, OutOfRangeStrategyIsAConfigError) {
  EXPECT_EQ(message_of<ConfigError>([] { (void)strategy_name(static_cast<CreationStrategy>(200)); }),
            "CreationStrategy 200 is not a creation strategy: the strategies are 0 to 3 (comm_split, create_group, "
            "per_group, comm_create)");
  for (CreationStrategy strategy : kAllCreationStrategies) {
    EXPECT_EQ(parse_creation_strategy(strategy_name(strategy)), strategy);
  }
}

TEST(CliEnumNames, OutOfRangeBackendIsAConfigError) {
  EXPECT_EQ(message_of<ConfigError>([] { (void)backend_name(static_cast<Backend>(7)); }),
            "Backend 7 is not a backend: the backends are 0 (mpi), 1 (nccl) and 2 (gloo)");
  for (Backend backend : kAllBackends) EXPECT_EQ(parse_backend(backend_name(backend)), backend);
}

TEST(CliEnumNames, UnknownStrategyTextIsEscapedAndCut) {
  EXPECT_EQ(message_of<ConfigError>([] { (void)parse_creation_strategy("per\x1b_group" + std::string(100, 'g')); }),
            "unknown creation strategy 'per\\x1b_group" + std::string(30, 'g') +
                "'...; the strategy must be one of create_group (the default), comm_split, per_group, "
                "comm_create");
}

}  // namespace
}  // namespace pgroups
