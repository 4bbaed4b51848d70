// The `pgroups` command: every failure becomes a one-line message on stderr and a
// documented exit status (docs/errors.md), never a stack trace or an abort. Error lines
// are escaped and cut (output.hpp), and standard output is checked before a success is
// reported.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "output.hpp"
#include "pgroups/error.hpp"
#include "subcommand.hpp"

namespace {

int run(int argc, char** argv) {
  using pgroups::ExitCode;
  using pgroups::cli::error_line;
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
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);
    // CLI11 quotes arguments as given; they may hold anything.
    std::fputs(error_line(error.what()).c_str(), stderr);
    std::fputs("Run with --help for more information.\n", stderr);
    return static_cast<int>(ExitCode::usage);
  } catch (const pgroups::Error& error) {
    std::fputs(error_line(error.what()).c_str(), stderr);
    return static_cast<int>(error.exit_code());
  } catch (const std::exception& error) {
    std::fputs(error_line(error.what(), "pgroups: internal error: ").c_str(), stderr);
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace

int main(int argc, char** argv) {
  pgroups::cli::report_closed_pipes_as_errors();
  int status = run(argc, argv);
  // Whatever reached standard output outside write_output (help, a library's print) is
  // checked here once more: a success is reported only when the output arrived.
  if (const std::string failure = pgroups::cli::output_failure(); !failure.empty() && status == 0) {
    std::fputs(pgroups::cli::error_line(failure).c_str(), stderr);
    status = static_cast<int>(pgroups::ExitCode::io);
  }
  return status;
}
