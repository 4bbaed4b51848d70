// One reader under libFuzzer: any bytes must give a config or a pgroups::Error, nothing
// else (no crash, no other exception, no sanitizer report).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pgroups/common/error.hpp"
#include "pgroups/config/config_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)pgroups::parse_config(text, pgroups::ConfigFormat::PGROUPS_FUZZ_FORMAT, "<fuzz>");
  } catch (const pgroups::Error&) {
    // Rejection is the expected outcome for most inputs.
  }
  return 0;
}
