#pragma once
// `pgroups bench --backend gloo` on a bootstrap (bench_on_bootstrap.cpp).

#include <string>

#include "mpi_options.hpp"
#include "plan_options.hpp"

namespace pgroups::cli {

/// What the bench on a bootstrap reads of the command's options (borrowed).
struct BenchOnBootstrap {
  const PlanOptions* plan = nullptr;
  const MpiOptions* mpi = nullptr;
  int repeats = 5;
  std::string format = "text";
  std::string bootstrap = "auto";
};

/// Times the gloo backend's creation on the bootstrap `job.bootstrap` resolves to and
/// returns the process's exit status; the bootstrap's start-up errors are thrown on this
/// rank before any collective.
[[nodiscard]] int run_bench_on_bootstrap(const BenchOnBootstrap& job);

}  // namespace pgroups::cli
