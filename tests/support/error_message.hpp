#pragma once
// The message of the exception a call throws, for tests that assert error texts.

#include <string>

namespace pgroups::test {

/// What `call` throws as E, or "no exception".
template <class E, class F>
std::string message_of(F&& call) {
  try {
    call();
  } catch (const E& error) {
    return error.what();
  }
  return "no exception";
}

}  // namespace pgroups::test
