#include "output.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups::cli {

void write_output(std::string_view text) {
  errno = 0;
  const std::size_t written = std::fwrite(text.data(), 1, text.size(), stdout);
  const int write_errno = errno;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_errno = errno;
  if (written != text.size() || !flushed || std::ferror(stdout) != 0) {
    const int reason = write_errno != 0 ? write_errno : flush_errno;
    throw IoError(fmt::format("cannot write the output to standard output: {}",
                              reason != 0 ? std::strerror(reason) : "write error"));
  }
}

std::string output_failure() {
  errno = 0;
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return {};
  const int reason = errno;
  return fmt::format("cannot write the output to standard output: {}",
                     reason != 0 ? std::strerror(reason) : "write error");
}

std::string error_line(std::string_view message, std::string_view prefix) {
  return fmt::format("{}{}\n", prefix, printable_excerpt(message, kMaxErrorLineBytes));
}

void report_closed_pipes_as_errors() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace pgroups::cli
