// Outputs never touch inputs (docs/reference/errors.md, "Output"): the files a command writes are
// checked against its inputs, each other and a redirected standard output before
// anything is written; a regular file is written whole or not at all; a stream is
// written directly; every failure names the system's reason.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/run_command.hpp"
#include "support/temp_files.hpp"

namespace pgroups {
namespace {

namespace fs = std::filesystem;
using test::run_command;

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override { write("c.toml", "[parallel]\nworld_size = 8\n"); }
  void write(const std::string& name, const std::string& text) { files_.write(name, text); }
  std::string read(const std::string& name) { return files_.read(name); }
  test::CommandResult run(const std::string& arguments) {
    return run_command(fmt::format("cd '{}' && {} {}", dir_.string(), PGROUPS_CLI, arguments));
  }
  std::size_t entries() { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  const test::TempDir files_{"output_files"};
  const fs::path& dir_ = files_.path();
};

TEST_F(OutputFiles, AnOutputThatIsTheConfigIsRefusedAndTheConfigKept) {
  for (const std::string option : {"--svg", "--html"}) {
    const auto result = run(fmt::format("plan --config c.toml {} c.toml", option));
    EXPECT_EQ(result.status, 5) << option;
    EXPECT_EQ(result.err, fmt::format("pgroups: error: {} 'c.toml' is the same file as --config 'c.toml': an output "
                                      "never overwrites an input or another output; name another file (nothing was "
                                      "written)\n",
                                      option));
    EXPECT_EQ(read("c.toml"), "[parallel]\nworld_size = 8\n");
  }
  // Through another name of the same file: a symlink, a hard link, a path with "..".
  fs::create_symlink("c.toml", dir_ / "link.svg");
  fs::create_hard_link(dir_ / "c.toml", dir_ / "hard.svg");
  for (const std::string name : {"link.svg", "hard.svg", "../$(basename $PWD)/c.toml"}) {
    const auto result = run(fmt::format("plan --config c.toml --svg {}", name));
    EXPECT_EQ(result.status, 5) << name;
    EXPECT_NE(result.err.find("is the same file as --config 'c.toml'"), std::string::npos) << result.err;
  }
  EXPECT_EQ(read("c.toml"), "[parallel]\nworld_size = 8\n");
}

TEST_F(OutputFiles, EveryFileTheConfigurationIsReadFromIsAnInputTheRankMapToo) {
  write("map.json", "[0, 2, 1, 3]");
  const auto plan = run("plan --mesh tp=2,dp=2 --rank-map map.json --svg map.json");
  EXPECT_EQ(plan.status, 5) << plan.err;
  EXPECT_NE(plan.err.find("--svg 'map.json' is the same file as --rank-map 'map.json'"), std::string::npos) << plan.err;
  write("c2.toml", "[cluster]\ngpus_per_node = 2\nnodes = [\"a\", \"b\"]\n");
  const auto place = run("place --cluster c2.toml --mesh tp=2,dp=2 --rank-map map.json --hostfile map.json");
  EXPECT_EQ(place.status, 5) << place.err;
  EXPECT_NE(place.err.find("--hostfile 'map.json' is the same file as --rank-map 'map.json'"), std::string::npos)
      << place.err;
  EXPECT_EQ(read("map.json"), "[0, 2, 1, 3]");
}

TEST_F(OutputFiles, TwoOutputsOfOneFileOrOneWithStandardOutputAreRefusedBeforeWriting) {
  const auto both = run("plan -w 8 --svg a.svg --html ./a.svg");
  EXPECT_EQ(both.status, 5);
  EXPECT_NE(both.err.find("--html './a.svg' is the same file as --svg 'a.svg'"), std::string::npos) << both.err;
  EXPECT_FALSE(fs::exists(dir_ / "a.svg"));
  const auto redirected = run("plan -w 8 --svg out.svg > out.svg");
  EXPECT_EQ(redirected.status, 5);
  EXPECT_NE(redirected.err.find("--svg 'out.svg' is the same file as standard output: an output never"),
            std::string::npos)
      << redirected.err;
}

TEST_F(OutputFiles, AnEmptyPathIsAnIoErrorAsForConfig) {
  for (const std::string option : {"--svg", "--html"}) {
    const auto result = run(fmt::format("plan -w 8 {} ''", option));
    EXPECT_EQ(result.status, 5);
    EXPECT_EQ(result.err, fmt::format("pgroups: error: {} was given an empty path: name a file, or leave {} out\n",
                                      option, option));
  }
}

TEST_F(OutputFiles, AFailedWriteLeavesTheOldFileAndNoPartialOneAndGivesTheReason) {
  write("keep.svg", "old\n");
  // A file size limit of one block makes the write fail (EFBIG, SIGXFSZ ignored).
  const auto result = run_command(fmt::format("cd '{}' && trap '' XFSZ && ulimit -f 1 && {} plan -w 64 --svg keep.svg",
                                              dir_.string(), PGROUPS_CLI));
  EXPECT_EQ(result.status, 5) << result.err;
  EXPECT_EQ(result.err, "pgroups: error: cannot write --svg to 'keep.svg': write failed: File too large\n");
  EXPECT_EQ(read("keep.svg"), "old\n");
  EXPECT_EQ(entries(), 2U);  // c.toml and keep.svg: no temporary left behind
  const auto full = run("plan -w 8 --svg /dev/full");
  EXPECT_EQ(full.status, 5);
  EXPECT_EQ(full.err, "pgroups: error: cannot write --svg to '/dev/full': write failed: No space left on device\n");
  const auto directory = run("plan -w 8 --html .");
  EXPECT_EQ(directory.status, 5);
  EXPECT_EQ(directory.err, "pgroups: error: cannot write --html to '.': open failed: Is a directory\n");
}

TEST_F(OutputFiles, ARegularFileIsReplacedWholeAndAStreamWrittenDirectly) {
  write("old.svg", "old\n");
  const auto replaced = run("plan -w 8 --svg old.svg --html page.html");
  ASSERT_EQ(replaced.status, 0) << replaced.err;
  EXPECT_EQ(read("old.svg").rfind("<svg", 0), 0U);
  EXPECT_NE(read("page.html").find("<!DOCTYPE html>"), std::string::npos);
  const auto stream = run("plan -w 8 --format json --svg /dev/stdout | grep -c '<svg'");
  EXPECT_EQ(stream.out, "1\n") << stream.err;
}

// Through a symbolic link, dangling or not, the link stays and its target is written;
// where the target cannot be written, nothing is touched.
TEST_F(OutputFiles, ADanglingLinkKeepsBeingALinkAndItsTargetIsWritten) {
  fs::create_directory(dir_ / "out");
  fs::create_symlink("out/picture.svg", dir_ / "link.svg");
  const auto result = run("plan -w 8 --svg link.svg");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.svg"));
  EXPECT_EQ(fs::read_symlink(dir_ / "link.svg"), "out/picture.svg");
  EXPECT_EQ(read("out/picture.svg").rfind("<svg", 0), 0U);
  // A chain of links, the last one dangling, relative to each link's own directory.
  fs::create_symlink("../out/chained.html", dir_ / "out" / "second.html");
  fs::create_symlink("out/second.html", dir_ / "first.html");
  const auto chained = run("plan -w 8 --html first.html");
  ASSERT_EQ(chained.status, 0) << chained.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "first.html"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "out" / "second.html"));
  EXPECT_NE(read("out/chained.html").find("<!DOCTYPE html>"), std::string::npos);
}

TEST_F(OutputFiles, ALinkToAnExistingFileKeepsBeingALinkAndTheFileIsReplaced) {
  write("real.svg", "old\n");
  fs::create_symlink(dir_ / "real.svg", dir_ / "link.svg");
  const auto result = run("plan -w 8 --svg link.svg");
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.svg"));
  EXPECT_EQ(read("real.svg").rfind("<svg", 0), 0U);
}

TEST_F(OutputFiles, ALinkWhoseTargetCannotBeWrittenIsRefusedWithNothingTouched) {
  fs::create_symlink("nowhere/x.svg", dir_ / "bad.svg");
  const auto missing = run("plan -w 8 --svg bad.svg");
  EXPECT_EQ(missing.status, 5);
  EXPECT_EQ(missing.err,
            "pgroups: error: cannot write --svg to 'bad.svg' (a link to 'nowhere/x.svg'): create a "
            "temporary file beside it failed: No such file or directory\n");
  EXPECT_TRUE(fs::is_symlink(dir_ / "bad.svg"));
  EXPECT_EQ(fs::read_symlink(dir_ / "bad.svg"), "nowhere/x.svg");
  EXPECT_EQ(entries(), 2U);  // c.toml and the link
  fs::create_symlink("loop2.svg", dir_ / "loop1.svg");
  fs::create_symlink("loop1.svg", dir_ / "loop2.svg");
  const auto loop = run("plan -w 8 --svg loop1.svg");
  EXPECT_EQ(loop.status, 5);
  EXPECT_EQ(loop.err,
            "pgroups: error: cannot write --svg to 'loop1.svg': resolve failed: Too many levels of "
            "symbolic links\n");
  EXPECT_TRUE(fs::is_symlink(dir_ / "loop1.svg"));
  EXPECT_EQ(entries(), 4U);
}

TEST_F(OutputFiles, TwoDanglingLinksToOneFileAreOneOutput) {
  fs::create_symlink("same.svg", dir_ / "a.svg");
  fs::create_symlink("./same.svg", dir_ / "b.html");
  const auto result = run("plan -w 8 --svg a.svg --html b.html");
  EXPECT_EQ(result.status, 5);
  EXPECT_NE(result.err.find("--html 'b.html' is the same file as --svg 'a.svg'"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(dir_ / "same.svg"));
}

// Memory is bounded before it is used (docs/reference/errors.md, "Memory"): the estimate counts
// W x kinds, not W alone, and an allocation that fails anyway is a clean error below 128.
TEST(OutputMemory, AJsonPlanIsCheckedOverWorldSizeTimesKindsBeforeItIsBuilt) {
  const auto result = run_command(fmt::format("{} plan -w 4194304 -p 2 -t 2 -m 1d --format json", PGROUPS_CLI));
  EXPECT_EQ(result.status, 3);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(
      result.err,
      "pgroups: error: the JSON plan of world size 4194304 x 6 group kinds would take about 1536 MiB, more than "
      "the cap of 1024 MiB on one output (docs/reference/errors.md); use `pgroups explain --rank R` for one rank, or "
      "fewer ranks or kinds\n");
}

#if defined(__SANITIZE_ADDRESS__)
#define PGROUPS_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PGROUPS_TEST_UNDER_ASAN 1
#endif
#endif

TEST(OutputMemory, AnAllocationThatFailsIsACleanErrorNotAnAbort) {
#ifdef PGROUPS_TEST_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer maps terabytes of shadow memory, which the address-space limit (ulimit -v) "
                  "of this test forbids";
#endif
  const auto result = run_command(
      fmt::format("ulimit -v 300000 && {} plan -w 1048576 -p 2 -t 2 -m 1d --format json > /dev/null", PGROUPS_CLI));
  EXPECT_EQ(result.status, 3);
  EXPECT_EQ(result.err,
            "pgroups: error: out of memory: an allocation failed (the machine's or the process's memory limit)\n");
}

}  // namespace
}  // namespace pgroups
