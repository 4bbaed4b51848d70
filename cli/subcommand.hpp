#pragma once
// The shape every `pgroups` subcommand shares: it registers its options on the app and
// returns what to run once parsing succeeded.

#include <CLI/CLI.hpp>

#include <functional>

namespace pgroups::cli {

struct Subcommand {
  CLI::App* app = nullptr;
  /// Runs the command after a successful parse; returns the process exit status.
  std::function<int()> run;
  /// Whether the parsed command starts MPI (verify; bench without --model). One that
  /// does not refuses to run as one of several ranks of an MPI launch (main.cpp). Unset:
  /// it needs no MPI.
  std::function<bool()> needs_mpi = {};
};

Subcommand add_plan_command(CLI::App& parent);
Subcommand add_explain_command(CLI::App& parent);
Subcommand add_place_command(CLI::App& parent);
/// In every build; lives in pgroups_cli_info.
Subcommand add_info_command(CLI::App& parent);
/// In builds with the context (PGROUPS_CLI_WITH_JOBS), with or without MPI; live in pgroups_cli_jobs.
Subcommand add_verify_command(CLI::App& parent);
Subcommand add_bench_command(CLI::App& parent);

}  // namespace pgroups::cli
