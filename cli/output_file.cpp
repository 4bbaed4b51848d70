#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups::cli {
namespace {

namespace fs = std::filesystem;

std::string quote_path(std::string_view path) { return quoted_excerpt(path); }

// Linux's own limit on the links one path resolution follows.
constexpr int kMaxLinkHops = 40;

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

// What a write of `path` lands on: `path` with every symbolic link of its last component
// followed, a dangling one included, so that writing the result keeps the links (a
// dangling link names the file it wants; replacing the link would drop that wish). The
// directories on the way are the system's to resolve. Sets `error` to ELOOP past as many
// links as the system follows itself.
std::string link_target(const std::string& path, int& error) {
  error = 0;
  std::string current = path;
  for (int hops = 0;; ++hops) {
    struct stat info{};
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return current;
    if (hops == kMaxLinkHops) {
      error = ELOOP;
      return current;
    }
    std::array<char, PATH_MAX + 1> buffer{};
    const ssize_t length = ::readlink(current.c_str(), buffer.data(), buffer.size());
    // A link that went away in between, or one longer than any path: the system decides.
    if (length < 0 || static_cast<std::size_t>(length) >= buffer.size()) return current;
    const fs::path link(std::string(buffer.data(), static_cast<std::size_t>(length)));
    current = link.is_absolute() ? link.string() : (fs::path(current).parent_path() / link).string();
  }
}

Identity identity_of(const std::string& path) {
  Identity id;
  struct stat info{};
  if (::stat(path.c_str(), &info) == 0) id.inode = std::pair(info.st_dev, info.st_ino);
  // A new file is known by where it will land: two links to one missing file are one output.
  int link_error = 0;
  const std::string target = id.inode ? path : link_target(path, link_error);
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(target, error), error);
  id.canonical = error || link_error != 0 ? path : canonical.string();
  return id;
}

// `target` is where the write lands when `file.path` is a symbolic link to it.
[[noreturn]] void fail(const NamedFile& file, std::string_view what, int error, const std::string& target = {}) {
  const std::string through =
      target.empty() || target == file.path ? std::string() : fmt::format(" (a link to {})", quote_path(target));
  throw IoError(fmt::format("cannot write {} to {}{}: {} failed: {}", file.option, quote_path(file.path), through, what,
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
      throw IoError(
          fmt::format("{} was given an empty path: name a file, or leave {} out", output.option, output.option));
    }
  }
  std::vector<NamedFile> others = inputs;
  std::vector<Identity> known;
  for (const NamedFile& input : inputs) known.push_back(identity_of(input.path));
  // Standard output redirected to a regular file is an output too.
  struct stat out{};
  if (::fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(out.st_mode)) {
    others.push_back({"standard output", ""});
    known.push_back({std::pair(out.st_dev, out.st_ino), {}});
  }
  for (const NamedFile& output : outputs) {
    const Identity id = identity_of(output.path);
    for (std::size_t i = 0; i < known.size(); ++i) {
      if (!id.same_as(known[i])) continue;
      const NamedFile& other = others[i];
      throw IoError(
          fmt::format("{} {} is the same file as {}{}: an output never overwrites an input or another "
                      "output; name another file (nothing was written)",
                      output.option, quote_path(output.path), other.option,
                      other.path.empty() ? "" : " " + quote_path(other.path)));
    }
    others.push_back(output);
    known.push_back(id);
  }
}

void write_file(const NamedFile& file, std::string_view text) {
  struct stat info{};
  const bool exists = ::stat(file.path.c_str(), &info) == 0;
  if (exists && S_ISDIR(info.st_mode)) fail(file, "open", EISDIR);
  if (exists && !S_ISREG(info.st_mode)) {
    // A stream: written as it is, since it cannot be replaced (through its links, which
    // /dev/stdout's magic ones in /proc must be left to the system to follow).
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
  // Through symbolic links, dangling or not, the link's target is written and the link
  // kept; where the target cannot be written, nothing is touched. An existing file's
  // target is its canonical path; a missing one's is where its links point.
  std::string target;
  if (exists) {
    std::error_code error;
    target = fs::canonical(file.path, error).string();
    if (error) fail(file, "resolve", error.value());
  } else {
    int link_error = 0;
    target = link_target(file.path, link_error);
    if (link_error != 0) fail(file, "resolve", link_error);
  }
  struct stat link{};
  const bool is_link = ::lstat(file.path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
  const auto fail_here = [&](std::string_view what, int error) {
    fail(file, what, error, is_link ? target : std::string());
  };
  const fs::path name = fs::path(target).filename();
  // "new/", "." and ".." name a directory, existing or not.
  if (name.empty() || name == "." || name == "..") fail_here("open", EISDIR);
  fs::path beside = target;
  beside.replace_filename(fs::path(".").concat(name.string()).concat(".pgroups-XXXXXX"));
  std::string temporary = beside.string();
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) fail_here("create a temporary file beside it", errno);
  auto discard = [&] { ::unlink(temporary.c_str()); };
  try {
    // The permissions a new file would get (or the old file's), not mkstemp's 0600.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    const mode_t mode = exists ? (info.st_mode & 07777) : (0666 & ~mask);
    if (::fchmod(fd, mode) != 0) fail_here("chmod", errno);
    write_all(fd, text, file);
  } catch (...) {
    ::close(fd);
    discard();
    throw;
  }
  if (::close(fd) != 0) {
    const int reason = errno;
    discard();
    fail_here("close", reason);
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int reason = errno;
    discard();
    fail_here("rename", reason);
  }
}

}  // namespace pgroups::cli
