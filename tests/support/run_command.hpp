#pragma once
// Runs a command line through the shell and captures its exit status, stdout and stderr,
// so that tests can check the CLI as a user sees it.

#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace pgroups::test {

struct CommandResult {
  int status = -1;  ///< exit status, or 128 + signal number
  std::string out;
  std::string err;
};

inline CommandResult run_command(const std::string& command) {
  const std::filesystem::path err_file =
      std::filesystem::temp_directory_path() / ("pgroups_test_stderr_" + std::to_string(::getpid()));
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>" + err_file.string()).c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 65536> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int raw = ::pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  std::ifstream err(err_file);
  std::stringstream text;
  text << err.rdbuf();
  result.err = text.str();
  std::filesystem::remove(err_file);
  return result;
}

#if defined(PGROUPS_MPIEXEC) && defined(PGROUPS_CLI)
/// The shell line that runs `pgroups ARGUMENTS` on `ranks` ranks under the test launcher.
inline std::string pgroups_on_ranks(std::int64_t ranks, const std::string& arguments) {
  return std::string(PGROUPS_MPIEXEC) + " -np " + std::to_string(ranks) + " " + PGROUPS_CLI + " " + arguments;
}
#endif

}  // namespace pgroups::test
