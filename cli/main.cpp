// The `pgroups` command: every failure becomes a one-line message on stderr and a
// documented exit status (docs/reference/errors.md), never a stack trace or an abort. Error lines
// are escaped and cut (output.hpp), and standard output is checked before a success is
// reported.

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "output.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/launch/launcher.hpp"
#include "subcommand.hpp"
#ifdef PGROUPS_CLI_WITH_MPI
#include "pgroups/mpi/bootstrap.hpp"
#endif

namespace {

// A command that needs no MPI cannot know what the other ranks of its launch run, and
// MPI ranks beside it would wait for it in MPI_Init. Started by an MPI launcher as one of
// several ranks, it refuses at once: its non-zero status makes the launcher end the job
// (and the MPI ranks' start-up timeout ends them where a launcher does not). torchrun
// starts no MPI job, a Slurm batch script is no launch (only an srun step is), and
// launcher variables that contradict each other are unknown (detect_launcher), so none of
// them refuses; a torchrun worker started by srun is torchrun's (the innermost wins).
std::optional<int> refuse_beside_other_ranks(std::string_view what) {
  const pgroups::LauncherInfo launcher = pgroups::detect_launcher();
  if (launcher.launcher == pgroups::Launcher::none || launcher.launcher == pgroups::Launcher::torchrun) {
    return std::nullopt;
  }
  if (!launcher.world_size || *launcher.world_size < 2) return std::nullopt;
  std::string_view variable;
  for (const pgroups::LauncherVariables& names : pgroups::launcher_variables()) {
    if (names.launcher == launcher.launcher) variable = names.world_size;
  }
  std::fputs(pgroups::cli::error_line(
                 fmt::format("{} needs no MPI, but it was started as one of {} ranks by {} ({}={}): it cannot know "
                             "what the other ranks run, and MPI ranks beside it would wait for it; run it on its own, "
                             "not under the launcher",
                             what, *launcher.world_size, pgroups::launcher_name(launcher.launcher), variable,
                             *launcher.world_size))
                 .c_str(),
             stderr);
  return static_cast<int>(pgroups::ExitCode::usage);
}

// The help asked for, as the user typed it: `pgroups plan --help` when a subcommand was
// reached before the flag (CLI11 counts a subcommand parsed as soon as it starts on it).
std::string help_request(const std::vector<pgroups::cli::Subcommand>& commands, std::string_view flag) {
  for (const auto& command : commands) {
    if (command.app->parsed()) return fmt::format("pgroups {} {}", command.app->get_name(), flag);
  }
  return fmt::format("pgroups {}", flag);
}

int run(int argc, char** argv) {
  using pgroups::ExitCode;
  using pgroups::cli::error_line;
  CLI::App app{"pgroups: process groups for hybrid-parallel training (data, pipeline, tensor 1d/2d/2.5d/3d, sequence)",
               "pgroups"};
  app.require_subcommand(1);
#ifdef PGROUPS_CLI_WITH_MPI
  pgroups::mpi::register_bootstrap();  // the MPI bootstrap behind launch's door (start_bootstrap)
#endif
  std::vector<pgroups::cli::Subcommand> commands = {
      pgroups::cli::add_plan_command(app),   pgroups::cli::add_explain_command(app),
      pgroups::cli::add_place_command(app),  pgroups::cli::add_info_command(app),
#ifdef PGROUPS_CLI_WITH_JOBS
      pgroups::cli::add_verify_command(app), pgroups::cli::add_bench_command(app),
#endif
  };
  try {
    app.parse(argc, argv);
    for (const auto& command : commands) {
      if (!command.app->parsed()) continue;
      if (!command.needs_mpi || !command.needs_mpi()) {
        const std::string what = fmt::format("pgroups {}", command.app->get_name());
        if (const auto refused = refuse_beside_other_ranks(what)) return *refused;
      }
      return command.run();
    }
    return static_cast<int>(ExitCode::usage);
  } catch (const CLI::CallForHelp& help) {
    if (const auto refused = refuse_beside_other_ranks(help_request(commands, "--help"))) return *refused;
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    if (const auto refused = refuse_beside_other_ranks(help_request(commands, "--help-all"))) return *refused;
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) {
      if (const auto refused = refuse_beside_other_ranks("pgroups")) return *refused;
      return app.exit(error);
    }
    // CLI11 quotes arguments as given; they may hold anything.
    std::fputs(error_line(error.what()).c_str(), stderr);
    std::fputs("Run with --help for more information.\n", stderr);
    return static_cast<int>(ExitCode::usage);
  } catch (const pgroups::Error& error) {
    std::fputs(error_line(error.what()).c_str(), stderr);
    return static_cast<int>(error.exit_code());
  } catch (const std::bad_alloc&) {
    // A std::bad_alloc not from operator new (which out_of_memory handles), e.g. a
    // container's length_error-like refusal: the same clean error.
    std::fputs("pgroups: error: out of memory: an allocation failed (the machine's or the process's memory limit)\n",
               stderr);
    return static_cast<int>(ExitCode::config);
  } catch (const std::exception& error) {
    std::fputs(error_line(error.what(), "pgroups: internal error: ").c_str(), stderr);
    return static_cast<int>(ExitCode::internal);
  }
}

// An allocation that fails, wherever it is (a noexcept path included, where a
// std::bad_alloc would reach std::terminate), ends the process with a clean error and a
// status below 128. Outputs that grow with the work check their size first
// (output_file.hpp), so this is the machine's own limit (ulimit -v, a container's).
[[noreturn]] void out_of_memory() {
  static constexpr char kMessage[] =
      "pgroups: error: out of memory: an allocation failed (the machine's or the process's memory limit)\n";
  // write(2), not stdio: nothing may be allocated here.
  static_cast<void>(::write(STDERR_FILENO, kMessage, sizeof kMessage - 1));
  std::_Exit(static_cast<int>(pgroups::ExitCode::config));
}

}  // namespace

int main(int argc, char** argv) {
  std::set_new_handler(out_of_memory);
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
