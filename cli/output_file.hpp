#pragma once
// The files a command writes beside standard output (--svg, --html): checked against
// its inputs and each other before anything is written, then each written whole or not
// at all (docs/errors.md, "Output").

#include <cstdint>
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
/// (a temporary file in the same directory, through symlinks) and renamed over it, so a
/// failed write leaves the old file as it was and no partial one; a stream (a character
/// device such as /dev/stdout or /dev/full, a pipe, a socket) is written directly.
/// Throws IoError naming the option, the path and the system's reason (strerror).
void write_file(const NamedFile& file, std::string_view text);

/// The most one output built in memory (a JSON plan, a picture) may take: 1 GiB.
inline constexpr std::int64_t kMaxOutputBytes = std::int64_t{1} << 30;

/// Checks, before anything is allocated, an output whose size grows with the work: its
/// estimate, `world_size` x `kinds` x `bytes_per_cell` (overflow-safe), against
/// kMaxOutputBytes. Throws ConfigError (exit 3) naming `what`, the world size, the
/// kinds, the estimate and the cap.
void check_output_estimate(std::string_view what, std::int64_t world_size, std::int64_t kinds,
                           std::int64_t bytes_per_cell);

}  // namespace pgroups::cli
