#pragma once
/// \file
/// A client of torch's TCP store (torch.distributed.TCPStore, the store torchrun's agent
/// serves), speaking the subset of its protocol that torch 2.13 speaks and pgroups needs:
/// validate, ping, set, multi_set, get, multi_get, add, check, wait and cancel_wait. The project links no libtorch: the
/// protocol is pinned to the torch version in python/requirements/torch2.txt and tested
/// against torch's own server (tests/launch). Keys are written as torch's clients write
/// them, with a leading '/', so that torch's clients of the same store see them.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pgroups/launch/store.hpp"

namespace pgroups {

class TcpStoreClient final : public Store {
 public:
  /// Connects to `host`:`port`, retrying until `timeout` (zero: no limit) while the store
  /// is not up yet, then validates and pings. BackendError naming the address and the
  /// system's error when it cannot connect by then; when the peer is no TCP store, at the
  /// first request that reads an answer (the ping's answer is read before it, so that
  /// connecting costs no round trip of its own), within `timeout` of connecting.
  TcpStoreClient(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout);
  ~TcpStoreClient() override;

  void set(std::string_view key, std::string_view value) override;
  void set_many(const std::vector<std::pair<std::string, std::string>>& values) override;
  std::vector<std::int64_t> add_many(const std::vector<std::pair<std::string, std::int64_t>>& deltas) override;
  [[nodiscard]] std::string get(std::string_view key) override;
  [[nodiscard]] std::vector<std::string> get_many(const std::vector<std::string>& keys) override;
  std::int64_t add(std::string_view key, std::int64_t delta) override;
  [[nodiscard]] bool check(const std::vector<std::string>& keys) override;
  /// Past `timeout` the wait is cancelled as torch's client cancels it (cancel_wait, then
  /// the server's answers read up to its WAIT_CANCELED), so the connection stays usable.
  [[nodiscard]] bool wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  /// "host:port".
  [[nodiscard]] std::string address() const override { return address_; }

 private:
  void send(std::string_view bytes);
  // Reads exactly `size` bytes; false when the deadline passed first.
  bool receive(void* out, std::size_t size, std::chrono::steady_clock::time_point deadline, bool limited);
  void receive(void* out, std::size_t size);
  // Reads the ping's answer, once, before any other; BackendError when it is no store's.
  void settle_ping();

  int socket_ = -1;
  std::optional<std::uint32_t> ping_;  // sent, its answer not read yet
  std::chrono::steady_clock::time_point ping_deadline_;
  std::string address_;
  std::chrono::milliseconds timeout_;
};

/// A TCP store served by this process, in a thread of its own, for a launch with no
/// launcher's store (a plain environment launch: rank 0 serves). It answers the requests
/// TcpStoreClient makes (validate, ping, set, multi_set, get, multi_get, add, check, wait, cancel_wait) in torch's
/// protocol, counters kept as decimal text as torch keeps them. A request it cannot serve closes that connection alone:
/// another kind, a field over 64 MiB, an add to a value that is no counter or past 64 bits, or more unread bytes than
/// one request (a peer that sends without reading the answers). Whether torch's own clients can use it is not tested
/// yet. Not copyable.
class TcpStoreServer {
 public:
  /// Listens on `port` (0: a free one) on every IPv4 and IPv6 address, or, on a host
  /// without IPv6 (a kernel booted with ipv6.disable=1: no IPv6 socket) or with `ipv6`
  /// false, on every IPv4 address, as torch's server does. BackendError naming the port and
  /// the system's error when it cannot (a port already in use).
  explicit TcpStoreServer(std::uint16_t port, bool ipv6 = true);
  /// Stops serving and closes every connection.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

 private:
  void serve();

  int listener_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: writing to it ends serve()
  int poller_ = -1;         // epoll over the pipe, the listener and the connections
  std::uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace pgroups
