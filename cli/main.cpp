// The `pgroups` command: every failure becomes a one-line message on stderr and a
// documented exit status (docs/errors.md), never a stack trace or an abort.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <exception>
#include <vector>

#include "pgroups/error.hpp"
#include "subcommand.hpp"

int main(int argc, char** argv) {
  using pgroups::ExitCode;
  CLI::App app{"pgroups: process groups for hybrid-parallel training (data, pipeline, tensor 1d/2d/2.5d/3d, sequence)",
               "pgroups"};
  app.require_subcommand(1);
  std::vector<pgroups::cli::Subcommand> commands = {
      pgroups::cli::add_plan_command(app),
      pgroups::cli::add_explain_command(app),
      pgroups::cli::add_info_command(app),
#ifdef PGROUPS_CLI_WITH_MPI
      pgroups::cli::add_verify_command(app),
      pgroups::cli::add_bench_command(app),
#endif
  };
  try {
    app.parse(argc, argv);
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    return static_cast<int>(ExitCode::usage);
  } catch (const CLI::ParseError& error) {
    const int status = app.exit(error);
    return status == 0 ? 0 : static_cast<int>(ExitCode::usage);
  } catch (const pgroups::Error& error) {
    fmt::print(stderr, "pgroups: error: {}\n", error.what());
    return static_cast<int>(error.exit_code());
  } catch (const std::exception& error) {
    fmt::print(stderr, "pgroups: internal error: {}\n", error.what());
    return static_cast<int>(ExitCode::internal);
  }
}
