// The sample configurations under tests/data/configs (the README's examples) hold one
// shape of each tensor mode in each format, and read to the settings they describe.

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "pgroups/config/config_reader.hpp"
#include "reader_test_helpers.hpp"

namespace pgroups {
namespace {

using test::make_config;

struct SampleFile {
  std::string name;
  ParallelConfig expected;
};

std::ostream& operator<<(std::ostream& out, const SampleFile& sample) { return out << sample.name; }

ParallelConfig with(ParallelConfig config, std::int64_t world_size, bool legacy_sequence_dp = false,
                    std::int64_t seed = 1024) {
  config.world_size = world_size;
  config.legacy_sequence_dp = legacy_sequence_dp;
  config.seed = seed;
  return config;
}

const ParallelConfig kNone = make_config(2, 1, TensorMode::none);
const ParallelConfig k1d = make_config(2, 4, TensorMode::tensor_1d);
const ParallelConfig k2d = make_config(2, 4, TensorMode::tensor_2d);
const ParallelConfig k2p5d = make_config(2, 8, TensorMode::tensor_2p5d, 2);
const ParallelConfig k3d = make_config(1, 8, TensorMode::tensor_3d);
const ParallelConfig kSequence = make_config(2, 4, TensorMode::sequence);

class SampleConfigFile : public ::testing::TestWithParam<SampleFile> {};

TEST_P(SampleConfigFile, ReadsToTheSettingsItDescribes) {
  const std::filesystem::path path = std::filesystem::path(PGROUPS_TEST_DATA_DIR) / "configs" / GetParam().name;
  EXPECT_EQ(read_config_file(path), GetParam().expected);
}

// One shape per line: the TOML and JSON files, then Colossal-AI's Python file, which
// holds no pgroups-only key.
std::vector<SampleFile> sample_files() {
  return {
      {"none.toml", kNone},
      {"none.json", kNone},
      {"colossal_none.py", kNone},
      {"1d.toml", k1d},
      {"1d.json", k1d},
      {"colossal_1d.py", k1d},
      {"2d.toml", k2d},
      {"2d.json", k2d},
      {"colossal_2d.py", k2d},
      {"2p5d.toml", with(k2p5d, 16)},
      {"2p5d.json", with(k2p5d, 16)},
      {"colossal_2p5d.py", k2p5d},
      {"3d.toml", k3d},
      {"3d.json", k3d},
      {"colossal_3d.py", k3d},
      {"sequence.toml", with(kSequence, 16, true, 42)},
      {"sequence.json", with(kSequence, 16, true, 42)},
      {"colossal_sequence.py", kSequence},
  };
}

INSTANTIATE_TEST_SUITE_P(AllShapesAllFormats, SampleConfigFile, ::testing::ValuesIn(sample_files()),
                         [](const ::testing::TestParamInfo<SampleFile>& param_info) {
                           std::string name = param_info.param.name;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace pgroups
