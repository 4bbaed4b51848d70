#pragma once
// Options shared by the commands that create groups under mpirun (verify, bench): how
// long creation may wait for the other ranks (--timeout, PGROUPS_TIMEOUT), and fault
// injection for testing that a stalled or dead rank ends the job instead of hanging it
// (--inject-stall-rank, --inject-exit-rank, --inject-step), as other HPC tools offer
// fault-injection switches for their own tests.

#include <CLI/CLI.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "pgroups/context/context_options.hpp"
#include "pgroups/launch/timeout.hpp"
#include "pgroups/layout/parallel_config.hpp"

namespace pgroups::cli {

struct MpiOptions {
  /// --timeout SECONDS, parsed once, as the command line is read (a malformed one is a
  /// usage error then); absent: PGROUPS_TIMEOUT, then the default
  /// (pgroups/launch/timeout.hpp), which resolve_timeout reads.
  std::optional<std::chrono::milliseconds> timeout;
  /// The timeout in effect (zero: none), resolved once by resolve() when the command
  /// starts; everything below the command line takes this value.
  std::chrono::milliseconds in_effect = kDefaultTimeout;
  /// --inject-stall-rank R: rank R stops, sleeping until killed, just before a step.
  std::optional<int> stall_rank;
  /// --inject-exit-rank R: rank R exits at once with status 1 just before a step.
  std::optional<int> exit_rank;
  /// --inject-step NAME: the step before which the faults strike, a step of creation or
  /// one of the command's steps after it (add_to); empty means each
  /// fault's default ("duplicate", the start of creation, for a stall; the first mode
  /// after `global`, i.e. after one mode was created, for an exit).
  std::string step;

  /// Registers --timeout and the --inject-* flags (in their own "Fault injection
  /// (testing)" group of the help) on `app`. `steps_after_creation` names the command's
  /// own steps after group creation (its WatchedPhase steps), which --inject-step
  /// accepts beside the steps of creation. An invalid --timeout (negative, not a number)
  /// is a usage error of the parse.
  void add_to(CLI::App& app, std::vector<std::string> steps_after_creation);

  /// The command line's one resolution of the timeout (resolve_timeout: --timeout, else
  /// PGROUPS_TIMEOUT, else the default) into in_effect, called first by each command that
  /// waits for other ranks, before MPI_Init or any bootstrap: a malformed PGROUPS_TIMEOUT
  /// is then this rank's ConfigError (status 3), with no wait.
  void resolve();

  /// Fills what these options decide in `options`: the timeout in effect (in_effect) and,
  /// on a rank named by an --inject-* flag, the before_step hook that stalls or exits.
  /// Throws ConfigError when an injected rank is outside the world of `size` ranks, when
  /// both faults name one rank, or when the step is not a step of `config` (an invalid
  /// `config` throws its own ConfigError).
  void apply(ContextOptions& options, const ParallelConfig& config, int rank, int size) const;

 private:
  std::string command_;
  std::vector<std::string> later_steps_;
};

}  // namespace pgroups::cli
