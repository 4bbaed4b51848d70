#pragma once
// The files a command writes beside standard output (--svg, --html): checked against
// its inputs and each other before anything is written, then each written whole or not
// at all (docs/reference/errors.md, "Output"). The cap on outputs built in memory is the report
// layer's (pgroups/report/output_size.hpp).

#include <string>
#include <string_view>
#include <vector>

namespace pgroups::cli {

/// A file named on the command line: the option that named it and the path as given.
struct NamedFile {
  std::string option;
  std::string path;
};

/// Refuses, before anything is written, a set of outputs that would touch an input or
/// each other: throws IoError for an empty output path (as `--config ''`), and for an
/// output that resolves to the same file as an input, another output, or the regular
/// file standard output is redirected to, naming both options and the path. Identity is
/// the file's (device, inode) where it exists (links and symlinks included), otherwise
/// its weakly canonical path. O(files^2).
void check_outputs(const std::vector<NamedFile>& outputs, const std::vector<NamedFile>& inputs);

/// Writes `text` to `file`. A regular file (or a new one) is written beside its target
/// (a temporary file in the same directory) and renamed over it, so a failed write
/// leaves the old file as it was and no partial one; a stream (a character device such
/// as /dev/stdout or /dev/full, a pipe, a socket) is written directly. A symbolic link,
/// dangling or not, stays a link: its target is written (created where missing), and
/// where the target cannot be written nothing is touched. Throws IoError naming the
/// option, the path (and a link's target) and the system's reason (strerror).
void write_file(const NamedFile& file, std::string_view text);

}  // namespace pgroups::cli
