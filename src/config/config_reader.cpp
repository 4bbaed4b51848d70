#include "pgroups/config/config_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>

#include "format_readers.hpp"
#include "parallel_table.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"

namespace pgroups {
namespace {

// Far beyond any real configuration, and small enough to read into memory at once.
constexpr std::size_t kMaxConfigFileBytes = std::size_t{64} << 20;

bool is_blank(std::string_view text) { return text.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos; }

// A path as messages quote it: escaped, so that no byte of an odd name (invalid UTF-8, a
// control character) can garble the line or empty a Python exception's message.
std::string quoted_path(const std::string& path) { return quoted_excerpt(path, '\'', 400); }

}  // namespace

namespace detail {
std::string read_whole_file(const std::filesystem::path& path) {
  const std::string name = quoted_path(path.string());
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw IoError(fmt::format("configuration file {} does not exist", name));
  }
  if (error) throw IoError(fmt::format("cannot read configuration file {}: {}", name, error.message()));
  if (status.type() == std::filesystem::file_type::directory) {
    throw IoError(fmt::format("configuration file {} is a directory", name));
  }
  // A FIFO or a device would block or never end.
  if (status.type() != std::filesystem::file_type::regular) {
    throw IoError(fmt::format("configuration file {} is not a regular file", name));
  }
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw IoError(fmt::format("cannot open configuration file {}: {}", name, std::strerror(errno)));
  // Read in chunks up to one byte past the limit rather than trusting the size stat()
  // gave: the file may grow in between.
  std::string text;
  // Sized once from stat() where it can be, so that reading never holds two copies
  // while the string grows.
  std::error_code size_error;
  const std::uintmax_t expected = std::filesystem::file_size(path, size_error);
  if (!size_error) text.reserve(static_cast<std::size_t>(std::min<std::uintmax_t>(expected, kMaxConfigFileBytes + 1)));
  char chunk[1 << 16];
  while (text.size() <= kMaxConfigFileBytes) {
    const std::size_t read = std::fread(chunk, 1, sizeof chunk, file.get());
    text.append(chunk, read);
    if (read < sizeof chunk) break;
  }
  if (std::ferror(file.get()) != 0) {
    throw IoError(fmt::format("cannot read configuration file {}: {}", name, std::strerror(errno)));
  }
  if (text.size() > kMaxConfigFileBytes) {
    throw IoError(
        fmt::format("configuration file {} is larger than the limit of {} MiB", name, kMaxConfigFileBytes >> 20));
  }
  return text;
}

ConfigValue read_tree_file(const std::filesystem::path& path, std::string& source) {
  if (path.empty()) throw IoError("the file path is empty: name a .toml, .json or .py file");
  if (path.native().find('\0') != std::string::npos) {
    throw IoError(fmt::format("file path {} holds a NUL byte, which no file name can", quoted_path(path.string())));
  }
  const auto format = config_format_from_path(path);
  source = printable_excerpt(path.string(), 400);
  if (!format) {
    const std::string extension = path.extension().string();
    throw ParseError(fmt::format("{}: cannot tell the format from {}; use .toml, .json or .py", source,
                                 extension.empty() ? std::string("a name without extension")
                                                   : fmt::format("the extension {}", quoted_excerpt(extension))));
  }
  const std::string text = read_whole_file(path);
  if (is_blank(text)) throw ParseError(fmt::format("{}: the file is empty", source));
  switch (*format) {
    case ConfigFormat::toml: return read_toml_tree(text, source);
    case ConfigFormat::json: return read_json_tree(text, source);
    case ConfigFormat::python: break;
  }
  return read_python_tree(text, source);
}
}  // namespace detail

std::optional<ConfigFormat> config_format_from_path(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  if (extension == ".toml") return ConfigFormat::toml;
  if (extension == ".json") return ConfigFormat::json;
  if (extension == ".py") return ConfigFormat::python;
  return std::nullopt;
}

ParallelConfig parse_config(std::string_view text, ConfigFormat format, std::string_view source) {
  // Every format would read an empty file as "all defaults", which is far more likely a
  // truncated or wrong file than a wish.
  if (is_blank(text)) throw ParseError(fmt::format("{}: the configuration is empty", source));
  detail::ConfigValue root;
  switch (format) {
    case ConfigFormat::toml: root = detail::read_toml_tree(text, source); break;
    case ConfigFormat::json: root = detail::read_json_tree(text, source); break;
    case ConfigFormat::python: root = detail::read_python_tree(text, source); break;
  }
  return detail::parallel_config_from_tree(root, format, source);
}

ParallelConfig read_config_file(const std::filesystem::path& path) {
  // Both most likely a mistake upstream (an unset variable, a string built wrong); the
  // system would read "" as no file and a name with a NUL as its part before the NUL.
  if (path.empty()) {
    throw IoError("the configuration file path is empty: name a .toml, .json or .py file");
  }
  if (path.native().find('\0') != std::string::npos) {
    throw IoError(
        fmt::format("configuration file path {} holds a NUL byte, which no file name can", quoted_path(path.string())));
  }
  const auto format = config_format_from_path(path);
  if (!format) {
    const std::string extension = path.extension().string();
    throw ParseError(fmt::format("{}: cannot tell the configuration format from {}; use .toml, .json or .py",
                                 printable_excerpt(path.string(), 400),
                                 extension.empty() ? std::string("a name without extension")
                                                   : fmt::format("the extension {}", quoted_excerpt(extension))));
  }
  const std::string text = detail::read_whole_file(path);
  return parse_config(text, *format, printable_excerpt(path.string(), 400));
}

}  // namespace pgroups
