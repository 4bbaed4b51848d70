#pragma once
// torch's TCP store protocol (torch/csrc/distributed/c10d/TCPStoreBackend.hpp, torch 2.13),
// the one copy that pgroups' client (tcp_store.cpp) and server (tcp_store_server.cpp)
// both speak: the first byte of every request, the validation magic, the answers, and how
// values go on the wire (little-endian, as torch's; a field is its 64-bit length, then
// its bytes). Only the requests pgroups uses are named; their numbers are torch's.

#include <cstdint>
#include <string>
#include <string_view>

namespace pgroups::store_protocol {

enum class Query : std::uint8_t {
  validate = 0,
  set = 1,
  get = 3,
  add = 4,
  check = 5,
  wait = 6,
  multi_get = 10,
  multi_set = 11,
  cancel_wait = 12,
  ping = 13,
};

/// The check a client sends first (QueryType::VALIDATE), so that a peer of another
/// protocol is found before any request.
inline constexpr std::uint32_t kValidationMagic = 0x3C85F7CE;

/// CheckResponseType: READY, NOT_READY.
inline constexpr std::uint8_t kReady = 0;
inline constexpr std::uint8_t kNotReady = 1;
/// WaitResponseType: STOP_WAITING (the keys are there, kReady's value), WAIT_CANCELED (the
/// answer to a cancel_wait, after any STOP_WAITING the server sent first).
inline constexpr std::uint8_t kStopWaiting = 0;
inline constexpr std::uint8_t kWaitCanceled = 1;

/// The longest key or value a request may carry: far above what pgroups writes (a rank's
/// addresses, an NCCL id, a status: bytes to kilobytes), and a bound on what a wrong peer
/// can make the server allocate.
inline constexpr std::uint64_t kLongestField = std::uint64_t{64} << 20;

template <typename T>
void append(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);  // little-endian, as torch's
}

inline void append_field(std::string& out, std::string_view bytes) {
  append<std::uint64_t>(out, bytes.size());
  out.append(bytes);
}

}  // namespace pgroups::store_protocol
