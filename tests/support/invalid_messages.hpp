#pragma once
// The exact message pgroups gives for each configuration of golden/invalid.json, keyed by
// the entry's note. Written out rather than computed, so that a message that loses an
// offending value or names a wrong one fails the test.

#include <map>
#include <string>

namespace pgroups::test {

inline const std::map<std::string, std::string>& invalid_messages() {
  static const std::string not_divisible =
      ": the data-parallel size W / (pipeline * tensor) must be a whole number";
  static const std::string not_q_q_depth = ", required by mode 2.5d (tensor size = q * q * depth)";
  static const std::string modes = "the mode must be one of none, 1d, 2d, 2.5d, 3d, sequence";
  static const std::map<std::string, std::string> messages = {
      {"2d tensor size not a perfect square", "tensor size 8 is not a perfect square, required by mode 2d"},
      {"2d tensor size not a perfect square (with pp)", "tensor size 8 is not a perfect square, required by mode 2d"},
      {"2d tensor size 2", "tensor size 2 is not a perfect square, required by mode 2d"},
      {"3d tensor size not a perfect cube", "tensor size 9 is not a perfect cube, required by mode 3d"},
      {"3d tensor size 4", "tensor size 4 is not a perfect cube, required by mode 3d"},
      {"3d tensor size 16", "tensor size 16 is not a perfect cube, required by mode 3d"},
      {"2.5d size 8 depth 3: 8/3 not q^2", "tensor size 8 is not depth 3 times a perfect square" + not_q_q_depth},
      {"2.5d size 4 depth 2: 4/2=2 not a square", "tensor size 4 is not depth 2 times a perfect square" + not_q_q_depth},
      {"2.5d size 12 depth 2: 6 not a square", "tensor size 12 is not depth 2 times a perfect square" + not_q_q_depth},
      {"2.5d size 8 depth 1: 8 not a square", "tensor size 8 is not depth 1 times a perfect square" + not_q_q_depth},
      {"2.5d depth 0", "depth 0 is invalid: the 2.5d depth must be a positive integer"},
      {"2.5d without depth key", "mode 2.5d requires a depth (tensor size = q * q * depth)"},
      {"world 10 not divisible by pp*tp=8",
       "world size 10 is not divisible by pipeline size 2 * tensor size 4 = 8" + not_divisible},
      {"world 12 not divisible by tp=8",
       "world size 12 is not divisible by pipeline size 1 * tensor size 8 = 8" + not_divisible},
      {"world 6 not divisible by pp=4",
       "world size 6 is not divisible by pipeline size 4 * tensor size 1 = 4" + not_divisible},
      {"world smaller than tp (dp would be 0)",
       "world size 4 is not divisible by pipeline size 1 * tensor size 16 = 16" + not_divisible},
      // Divisibility is checked before the mode's own rule.
      {"world not divisible AND bad 2d size: which check fires first",
       "world size 10 is not divisible by pipeline size 1 * tensor size 8 = 8" + not_divisible},
      {"sequence: world 6 not divisible by 4",
       "world size 6 is not divisible by pipeline size 1 * tensor size 4 = 4" + not_divisible},
      {"unknown mode", "unknown tensor mode '4d'; " + modes},
      {"upper-case mode (ALLOWED_MODES is case-sensitive)", "unknown tensor mode '2D'; " + modes + " (did you mean 2d?)"},
      {"3d with a depth key: extra key forwarded as kwarg",
       "depth 2 is not allowed with mode 3d: depth belongs to mode 2.5d only"},
      {"2d with a depth key: extra key forwarded as kwarg",
       "depth 2 is not allowed with mode 2d: depth belongs to mode 2.5d only"},
      {"1d with a depth key", "depth 2 is not allowed with mode 1d: depth belongs to mode 2.5d only"},
      {"sequence with a depth key", "depth 2 is not allowed with mode sequence: depth belongs to mode 2.5d only"},
  };
  return messages;
}

/// The message expected for an entry of golden/invalid.json; "" (which no error equals)
/// for an entry this table lacks, so that a new entry fails until its message is added.
inline std::string invalid_message(const std::string& note) {
  const auto found = invalid_messages().find(note);
  return found == invalid_messages().end() ? std::string() : found->second;
}

}  // namespace pgroups::test
