#pragma once
// The exact message pgroups gives for each configuration of golden/invalid.json, keyed by
// the entry's note, from tests/data/invalid_messages.json (shared with the Python tests).
// Written out rather than computed, so that a message that loses an offending value or
// names a wrong one fails the test.

#include <map>
#include <string>

#include "support/golden.hpp"

namespace pgroups::test {

inline const std::map<std::string, std::string>& invalid_messages() {
  static const std::map<std::string, std::string> messages =
      load_json(data_dir() / "invalid_messages.json").get<std::map<std::string, std::string>>();
  return messages;
}

/// The message expected for an entry of golden/invalid.json; "" (which no error equals)
/// for an entry the table lacks, so that a new entry fails until its message is added.
inline std::string invalid_message(const std::string& note) {
  const auto found = invalid_messages().find(note);
  return found == invalid_messages().end() ? std::string() : found->second;
}

}  // namespace pgroups::test
