// Every rank reads the configuration, so reading one must cost memory in proportion to
// its size whatever it holds: at most kMaxMemoryFactor times the text's size at any
// moment, counted by replacing the global operator new and delete. Crafted files of
// 10 MiB pack as many small keys, arrays and tables as a format allows.

#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define PGROUPS_COUNTS_ALLOCATIONS 0  // ASan owns operator new and its quarantine
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PGROUPS_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef PGROUPS_COUNTS_ALLOCATIONS
#define PGROUPS_COUNTS_ALLOCATIONS 1
#endif

namespace {

// Live and peak bytes allocated through operator new, each block prefixed by its size.
std::atomic<std::size_t> live_bytes{0};
std::atomic<std::size_t> peak_bytes{0};
constexpr std::size_t kHeader = alignof(std::max_align_t);

void* counted_alloc(std::size_t size) {
  void* block = std::malloc(size + kHeader);
  if (block == nullptr) throw std::bad_alloc();
  *static_cast<std::size_t*>(block) = size;
  const std::size_t now = live_bytes.fetch_add(size) + size;
  std::size_t peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
  return static_cast<char*>(block) + kHeader;
}

void counted_free(void* pointer) noexcept {
  if (pointer == nullptr) return;
  void* block = static_cast<char*>(pointer) - kHeader;
  live_bytes.fetch_sub(*static_cast<std::size_t*>(block));
  std::free(block);
}

}  // namespace

#if PGROUPS_COUNTS_ALLOCATIONS
void* operator new(std::size_t size) { return counted_alloc(size); }
void* operator new[](std::size_t size) { return counted_alloc(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(size);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* pointer) noexcept { counted_free(pointer); }
void operator delete[](void* pointer) noexcept { counted_free(pointer); }
void operator delete(void* pointer, std::size_t) noexcept { counted_free(pointer); }
void operator delete[](void* pointer, std::size_t) noexcept { counted_free(pointer); }
void operator delete(void* pointer, const std::nothrow_t&) noexcept { counted_free(pointer); }
void operator delete[](void* pointer, const std::nothrow_t&) noexcept { counted_free(pointer); }
#endif

namespace pgroups {
namespace {

// The documented bound (docs/reference/errors.md, "Input rules"): reading a configuration holds
// at most this many times its size, the text itself included.
constexpr double kMaxMemoryFactor = 8.0;
constexpr std::size_t kTargetBytes = 10u << 20;

struct Crafted {
  std::string name;
  ConfigFormat format;
  std::string head;  // once
  std::string part;  // repeated up to kTargetBytes, with {} replaced by a counter
  std::string tail;  // once
  std::size_t bytes = kTargetBytes;  // the size before the tail
};

std::ostream& operator<<(std::ostream& out, const Crafted& crafted) { return out << crafted.name; }

std::string build(const Crafted& crafted) {
  std::string text = crafted.head;
  text.reserve(crafted.bytes + crafted.tail.size() + 64);
  const std::size_t hole = crafted.part.find("{}");
  for (std::size_t i = 0; text.size() < crafted.bytes; ++i) {
    if (hole == std::string::npos) {
      text += crafted.part;
    } else {
      text.append(crafted.part, 0, hole).append(std::to_string(i)).append(crafted.part, hole + 2);
    }
  }
  return text + crafted.tail;
}

std::vector<Crafted> crafted_files() {
  constexpr auto kToml = ConfigFormat::toml;
  constexpr auto kJson = ConfigFormat::json;
  constexpr auto kPython = ConfigFormat::python;
  return {
      {"toml_small_keys", kToml, "[parallel]\npipeline = 2\n[m]\n", "k{}=1\n", ""},
      {"toml_empty_arrays", kToml, "a = [", "[],", "[]]\n"},
      {"toml_array_tables", kToml, "", "[[t]]\n", ""},
      {"toml_inline_tables", kToml, "a = [", "{x=1},", "{}]\n"},
      {"toml_dotted_keys", kToml, "", "a{}.b.c=1\n", ""},
      {"toml_one_long_string", kToml, "s = \"", "abcdefgh", "\"\n[parallel]\npipeline = 2\n"},
      {"json_small_keys", kJson, "{\"parallel\": {\"pipeline\": 2}, \"m\": {", "\"k{}\":1,", "\"z\":0}}"},
      {"json_empty_arrays", kJson, "{\"a\": [", "[],", "[]]}"},
      {"json_small_tables", kJson, "{\"a\": [", "{\"x\":{}},", "{}]}"},
      {"json_one_long_string", kJson, "{\"s\": \"", "abcdefgh", "\", \"parallel\": {\"pipeline\": 2}}"},
      // Just past a power of two: the parser's buffers double to twice the string's size.
      {"json_string_past_a_power_of_two", kJson, "{\"s\": \"", "x", "\", \"parallel\": {\"pipeline\": 2}}",
       (8u << 20) + 8},
      {"python_small_keys", kPython, "parallel = dict(pipeline=2)\n", "k{}=1\n", ""},
      {"python_empty_lists", kPython, "a = [", "[],", "[]]\n"},
      {"python_small_dicts", kPython, "a = [", "dict(x={}),", "{}]\n"},
      {"python_one_long_string", kPython, "s = '", "abcdefgh", "'\nparallel = dict(pipeline=2)\n"},
  };
}

class ConfigReadMemory : public ::testing::TestWithParam<Crafted> {};

TEST_P(ConfigReadMemory, ParsingHoldsAtMostAFewTimesTheTextsSize) {
  if (!PGROUPS_COUNTS_ALLOCATIONS) GTEST_SKIP() << "allocations are not counted under AddressSanitizer";
  const std::string text = build(GetParam());
  const std::size_t before = live_bytes.load();
  peak_bytes.store(before);
  try {
    (void)parse_config(text, GetParam().format);
  } catch (const Error&) {
    // Rejected or accepted, the memory bound holds.
  }
  const std::size_t used = peak_bytes.load() - before;
  EXPECT_LE(static_cast<double>(used), kMaxMemoryFactor * static_cast<double>(text.size()))
      << used << " bytes for " << text.size();
  RecordProperty("peak_bytes", std::to_string(used));
  RecordProperty("text_bytes", std::to_string(text.size()));
  std::printf("%s: %zu bytes of text, peak %zu bytes (%.2fx)\n", GetParam().name.c_str(), text.size(), used,
              static_cast<double>(used) / static_cast<double>(text.size()));
}

TEST_P(ConfigReadMemory, ReadingTheFileHoldsAtMostAFewTimesItsSize) {
  if (!PGROUPS_COUNTS_ALLOCATIONS) GTEST_SKIP() << "allocations are not counted under AddressSanitizer";
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("pgroups_memory_" + std::to_string(::getpid()) + "_" + GetParam().name +
                                                (GetParam().format == ConfigFormat::toml   ? ".toml"
                                                 : GetParam().format == ConfigFormat::json ? ".json"
                                                                                           : ".py"));
  std::size_t size = 0;
  {
    const std::string text = build(GetParam());
    size = text.size();
    std::ofstream(path, std::ios::binary) << text;
  }
  const std::size_t before = live_bytes.load();
  peak_bytes.store(before);
  try {
    (void)read_config_file(path);
  } catch (const Error&) {
  }
  const std::size_t used = peak_bytes.load() - before;
  std::filesystem::remove(path);
  EXPECT_LE(static_cast<double>(used), kMaxMemoryFactor * static_cast<double>(size)) << used << " bytes for " << size;
}

INSTANTIATE_TEST_SUITE_P(TenMebibytes, ConfigReadMemory, ::testing::ValuesIn(crafted_files()),
                         [](const ::testing::TestParamInfo<Crafted>& param_info) { return param_info.param.name; });

TEST(ConfigReadMemoryLimit, TomlWithMoreValuesThanTheLimitIsRejectedBeforeItIsBuilt) {
  std::string text = "[parallel]\npipeline = 2\n[m]\n";
  for (int i = 0; i < 10'001; ++i) text.append("k").append(std::to_string(i)).append("=1\n");
  try {
    (void)parse_config(text, ConfigFormat::toml);
    ADD_FAILURE() << "accepted";
  } catch (const ParseError& error) {
    EXPECT_STREQ(error.what(),
                 "<config>:10001:6: more than 10000 values, tables or keys: a TOML configuration is read whole, so it "
                 "may hold at most 10000 (real ones hold tens)");
  }
  std::string fits = "[parallel]\npipeline = 2\n[m]\n";
  for (int i = 0; i < 9'000; ++i) fits.append("k").append(std::to_string(i)).append("=1\n");
  // Within the limit: what stops it then is the reader's rule, the unknown top-level table.
  try {
    (void)parse_config(fits, ConfigFormat::toml);
    ADD_FAILURE() << "accepted";
  } catch (const ParseError& error) {
    EXPECT_EQ(std::string(error.what()).rfind("<config>:3:2: unknown top-level key 'm'", 0), 0U) << error.what();
  }
}

}  // namespace
}  // namespace pgroups
