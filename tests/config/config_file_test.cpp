// Reading configuration files: the format comes from the extension, and a file that
// cannot be read is an IoError naming its path.

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"
#include "support/error_message.hpp"
#include "support/temp_files.hpp"

namespace pgroups {
namespace {

using test::make_config;

class ConfigFile : public ::testing::Test {
 protected:
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::permissions(dir_ / "secret.toml", std::filesystem::perms::owner_all, ignored);
  }

  std::filesystem::path write(const std::string& name, const std::string& text) const {
    return files_.write(name, text);
  }

  template <typename Error>
  static std::string failure(const std::filesystem::path& path) {
    return test::message_of<Error>([&] { (void)read_config_file(path); });
  }

  const test::TempDir files_{"config_file"};
  const std::filesystem::path& dir_ = files_.path();
};

TEST(ConfigFormatFromPath, KnowsTheThreeExtensions) {
  EXPECT_EQ(config_format_from_path("a/b/run.toml"), ConfigFormat::toml);
  EXPECT_EQ(config_format_from_path("run.json"), ConfigFormat::json);
  EXPECT_EQ(config_format_from_path("configs/colossal.py"), ConfigFormat::python);
  EXPECT_EQ(config_format_from_path("run.yaml"), std::nullopt);
  EXPECT_EQ(config_format_from_path("run.TOML"), std::nullopt);
  EXPECT_EQ(config_format_from_path("toml"), std::nullopt);
  EXPECT_EQ(config_format_from_path(""), std::nullopt);
}

TEST_F(ConfigFile, EachFormatIsChosenByItsExtension) {
  EXPECT_EQ(read_config_file(write("a.toml", "[parallel]\npipeline = 2\n")), make_config(2, 1, TensorMode::none));
  EXPECT_EQ(read_config_file(write("a.json", "{\"parallel\": {\"pipeline\": 3}}")),
            make_config(3, 1, TensorMode::none));
  EXPECT_EQ(read_config_file(write("a.py", "parallel = dict(pipeline=4)\n")), make_config(4, 1, TensorMode::none));
}

TEST_F(ConfigFile, MessagesNameTheFileAsTheirSource) {
  const auto path = write("bad.py", "x = 1\nimport os\n");
  EXPECT_EQ(failure<ParseError>(path),
            path.string() + ":2:1: 'import' is not allowed (a Python config is read as literals, never executed)");
}

TEST_F(ConfigFile, UnknownExtensionIsAParseErrorListingTheKnownOnes) {
  const auto yaml = write("run.yaml", "parallel: {}\n");
  EXPECT_EQ(
      failure<ParseError>(yaml),
      yaml.string() + ": cannot tell the configuration format from the extension '.yaml'; use .toml, .json or .py");
  const auto bare = write("run", "");
  EXPECT_EQ(failure<ParseError>(bare),
            bare.string() +
                ": cannot tell the configuration format from a name without extension; use .toml, .json "
                "or .py");
}

TEST_F(ConfigFile, MissingFileIsAnIoErrorNamingThePath) {
  const auto path = dir_ / "missing.toml";
  EXPECT_EQ(failure<IoError>(path), "configuration file '" + path.string() + "' does not exist");
}

TEST_F(ConfigFile, AnEmptyPathOrOneWithANulIsAnIoErrorNotAnotherFile) {
  EXPECT_EQ(failure<IoError>(""), "the configuration file path is empty: name a .toml, .json or .py file");
  // The system would read "c.toml\0.json" as c.toml, a file that exists.
  write("c.toml", "[parallel]\npipeline = 2\n");
  const std::string with_nul = (dir_ / "c.toml").string() + std::string("\0.json", 6);
  EXPECT_EQ(failure<IoError>(with_nul), "configuration file path '" + (dir_ / "c.toml").string() +
                                            "\\x00.json' holds a NUL byte, which no file "
                                            "name can");
}

TEST_F(ConfigFile, AnOddPathIsEscapedInEveryMessage) {
  // Not UTF-8 and a newline: a message quoting them raw would break a line, or a Python
  // exception's text.
  const auto odd = dir_ / "r\xff\nn.toml";
  EXPECT_EQ(failure<IoError>(odd), "configuration file '" + dir_.string() + "/r\\xff\\nn.toml' does not exist");
  write("b\xfe.py", "import os\n");
  EXPECT_EQ(failure<ParseError>(dir_ / "b\xfe.py"),
            dir_.string() +
                "/b\\xfe.py:1:1: 'import' is not allowed (a Python config is read as literals, never "
                "executed)");
}

TEST_F(ConfigFile, DirectoryIsAnIoError) {
  const auto path = dir_ / "folder.json";
  std::filesystem::create_directory(path);
  EXPECT_EQ(failure<IoError>(path), "configuration file '" + path.string() + "' is a directory");
}

TEST_F(ConfigFile, FifoIsRejectedInsteadOfBlocking) {
  const auto path = dir_ / "pipe.toml";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(failure<IoError>(path), "configuration file '" + path.string() + "' is not a regular file");
}

TEST_F(ConfigFile, UnreadableFileIsAnIoErrorWithTheSystemsReason) {
  const auto path = write("secret.toml", "[parallel]\n");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  if (std::ifstream(path).is_open()) GTEST_SKIP() << "running with privileges that read any file";
  EXPECT_EQ(failure<IoError>(path), "cannot open configuration file '" + path.string() + "': Permission denied");
}

TEST_F(ConfigFile, FileOverTheSizeLimitIsAnIoError) {
  const auto path = write("huge.toml", "");
  std::filesystem::resize_file(path, (std::uintmax_t{64} << 20) + 1);  // sparse: costs no disk
  EXPECT_EQ(failure<IoError>(path), "configuration file '" + path.string() + "' is larger than the limit of 64 MiB");
}

TEST_F(ConfigFile, EmptyFileIsAParseError) {
  const auto path = write("empty.toml", "");
  EXPECT_EQ(failure<ParseError>(path), path.string() + ": the configuration is empty");
}

}  // namespace
}  // namespace pgroups
