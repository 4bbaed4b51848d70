#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "pgroups/common/printable.hpp"
#include "pgroups/layout/error.hpp"

namespace pgroups::cli {
namespace {

namespace fs = std::filesystem;

std::string quote_path(std::string_view path) { return quoted_excerpt(path); }

// What a path resolves to: the file's identity when it exists, its weakly canonical
// path otherwise (two names of one new file compare equal there).
struct Identity {
  std::optional<std::pair<dev_t, ino_t>> inode;
  std::string canonical;
  bool same_as(const Identity& other) const {
    if (inode && other.inode) return *inode == *other.inode;
    return !inode && !other.inode && canonical == other.canonical;
  }
};

Identity identity_of(const std::string& path) {
  Identity id;
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) id.inode = std::pair(info.st_dev, info.st_ino);
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path, error), error);
  id.canonical = error ? path : canonical.string();
  return id;
}

[[noreturn]] void fail(const NamedFile& file, std::string_view what, int error) {
  throw IoError(fmt::format("cannot write {} to {}: {} failed: {}", file.option, quote_path(file.path), what,
                            std::strerror(error)));
}

void write_all(int fd, std::string_view text, const NamedFile& file) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      fail(file, "write", errno);
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

}  // namespace

void check_outputs(const std::vector<NamedFile>& outputs, const std::vector<NamedFile>& inputs) {
  for (const NamedFile& output : outputs) {
    if (output.path.empty()) {
      // An empty path is most likely an unset shell variable, as for --config ''.
      throw IoError(fmt::format("{} was given an empty path: name a file, or leave {} out", output.option,
                                output.option));
    }
  }
  std::vector<NamedFile> others = inputs;
  std::vector<Identity> known;
  for (const NamedFile& input : inputs) known.push_back(identity_of(input.path));
  // Standard output redirected to a regular file is an output too.
  struct stat out {};
  if (::fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode)) {
    others.push_back({"standard output", ""});
    known.push_back({std::pair(out.st_dev, out.st_ino), {}});
  }
  for (const NamedFile& output : outputs) {
    const Identity id = identity_of(output.path);
    for (std::size_t i = 0; i < known.size(); ++i) {
      if (!id.same_as(known[i])) continue;
      const NamedFile& other = others[i];
      throw IoError(fmt::format("{} {} is the same file as {}{}: an output never overwrites an input or another "
                                "output; name another file (nothing was written)",
                                output.option, quote_path(output.path), other.option,
                                other.path.empty() ? "" : " " + quote_path(other.path)));
    }
    others.push_back(output);
    known.push_back(id);
  }
}

void write_file(const NamedFile& file, std::string_view text) {
  struct stat info {};
  const bool exists = ::stat(file.path.c_str(), &info) == 0;
  if (exists && S_ISDIR(info.st_mode)) fail(file, "open", EISDIR);
  if (exists && !S_ISREG(info.st_mode)) {
    // A stream: written as it is, since it cannot be replaced.
    const int fd = ::open(file.path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(file, "open", errno);
    try {
      write_all(fd, text, file);
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0) fail(file, "close", errno);
    return;
  }
  // The target through symlinks, so that a link to a file keeps being a link.
  std::error_code error;
  const fs::path target = fs::weakly_canonical(fs::absolute(file.path, error), error);
  if (error) fail(file, "resolve", error.value());
  fs::path beside = target;
  beside.replace_filename(fs::path(".").concat(target.filename().string()).concat(".pgroups-XXXXXX"));
  std::string temporary = beside.string();
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) fail(file, "create a temporary file beside it", errno);
  auto discard = [&] { ::unlink(temporary.c_str()); };
  try {
    // The permissions a new file would get (or the old file's), not mkstemp's 0600.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    const mode_t mode = exists ? (info.st_mode & 07777) : (0666 & ~mask);
    if (::fchmod(fd, mode) != 0) fail(file, "chmod", errno);
    write_all(fd, text, file);
  } catch (...) {
    ::close(fd);
    discard();
    throw;
  }
  if (::close(fd) != 0) {
    const int reason = errno;
    discard();
    fail(file, "close", reason);
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int reason = errno;
    discard();
    fail(file, "rename", reason);
  }
}

}  // namespace pgroups::cli
