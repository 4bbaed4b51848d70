#pragma once
// What every command prints goes through here: standard output written and checked, so
// that a full disk or a closed pipe is an error (IoError, exit 5) rather than a silent
// success, and error lines made safe to show on a terminal.

#include <string>
#include <string_view>

namespace pgroups::cli {

/// Writes `text` to standard output and flushes it. Throws IoError naming the reason
/// ("No space left on device", "Broken pipe") when any of it could not be written.
void write_output(std::string_view text);

/// Flushes standard output and reports whether everything written to it so far (by
/// write_output, std::cout or CLI11's help) reached it; the error's reason otherwise.
[[nodiscard]] std::string output_failure();

/// The line printed for an error: `prefix` + `message` with control and non-ASCII bytes
/// escaped and the whole cut at kMaxErrorLineBytes, + "\n".
[[nodiscard]] std::string error_line(std::string_view message, std::string_view prefix = "pgroups: error: ");

/// Makes writes to a closed pipe fail with EPIPE (reported as above) instead of killing
/// the process with SIGPIPE, whatever the parent left the signal at.
void report_closed_pipes_as_errors();

}  // namespace pgroups::cli
