#include "pgroups/launch/tcp_store.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/timeout.hpp"
#include "store_protocol.hpp"

namespace pgroups {
namespace {

using Clock = std::chrono::steady_clock;

using store_protocol::append;
using store_protocol::append_field;
using store_protocol::Query;

std::string store_key(std::string_view key) {
  std::string out(1, '/');
  out.append(key);
  return out;
}

// A check's, a wait's or a multi_get's request: the count of keys, then each.
std::string keys_request(Query query, const std::vector<std::string>& keys) {
  std::string request;
  append(request, query);
  append<std::uint64_t>(request, keys.size());
  for (const std::string& key : keys) append_field(request, store_key(key));
  return request;
}

// One connection to `address`, waiting for it until `deadline` at the latest (where
// `limited`): a host that drops packets would otherwise hold connect for the kernel's SYN
// retries, minutes past the caller's timeout. -1 with `error` set when it fails.
int connect_by(const addrinfo& address, Clock::time_point deadline, bool limited, std::string& error) {
  const int fd = ::socket(address.ai_family, address.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, address.ai_protocol);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  int failure = ::connect(fd, address.ai_addr, address.ai_addrlen) == 0 ? 0 : errno;
  while (failure == EINPROGRESS || failure == EINTR) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (limited && left <= 0) {
      failure = ETIMEDOUT;
      break;
    }
    pollfd ready{fd, POLLOUT, 0};
    const int polled = ::poll(&ready, 1, limited ? static_cast<int>(std::min<std::int64_t>(left, 1000)) : 1000);
    if (polled < 0 && errno != EINTR) {
      failure = errno;
    } else if (polled > 0) {
      socklen_t length = sizeof failure;
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length) != 0) failure = errno;
    }
  }
  if (failure != 0) {
    error = failure == ETIMEDOUT ? std::string("no answer before the timeout (a host that drops packets?)")
                                 : std::string(std::strerror(failure));
    ::close(fd);
    return -1;
  }
  // The client's own reads and writes are bounded by poll and SO_SNDTIMEO: blocking again.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int connect_once(const std::string& host, std::uint16_t port, Clock::time_point deadline, bool limited,
                 std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int status = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); status != 0) {
    error = ::gai_strerror(status);
    return -1;
  }
  int fd = -1;
  for (const addrinfo* at = found; at != nullptr && fd < 0; at = at->ai_next)
    fd = connect_by(*at, deadline, limited, error);
  ::freeaddrinfo(found);
  return fd;
}

}  // namespace

TcpStoreClient::TcpStoreClient(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout)
    : address_(fmt::format("{}:{}", host, port)), timeout_(timeout) {
  const Clock::time_point deadline = deadline_after(Clock::now(), timeout);
  std::string error;
  // The store may not listen yet (its rank starts it as the others start): retry.
  while ((socket_ = connect_once(host, port, deadline, is_limited(timeout), error)) < 0) {
    if (is_limited(timeout) && Clock::now() >= deadline) {
      throw BackendError(
          fmt::format("cannot reach the TCP store at {} within {}: {}", address_, seconds_text(timeout), error));
    }
    std::this_thread::sleep_for(kStoreRetryInterval);
  }
  if (is_limited(timeout)) {
    // A peer that stops reading cannot hold a write past the timeout either.
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
    const timeval limit{
        static_cast<time_t>(seconds.count()),
        static_cast<suseconds_t>(std::chrono::duration_cast<std::chrono::microseconds>(timeout - seconds).count())};
    ::setsockopt(socket_, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  }
  // The ping's answer is read before the first request's: the ping goes out with that
  // request, so that connecting costs no round trip of its own.
  std::string request;
  append(request, Query::validate);
  append(request, store_protocol::kValidationMagic);
  append(request, Query::ping);
  ping_ = static_cast<std::uint32_t>(::getpid());
  ping_deadline_ = deadline;
  append(request, *ping_);
  send(request);
}

void TcpStoreClient::settle_ping() {
  if (!ping_) return;
  const std::uint32_t nonce = *ping_;
  ping_.reset();
  std::uint32_t echoed = 0;
  const bool answered = receive(&echoed, sizeof echoed, ping_deadline_, is_limited(timeout_));
  if (!answered || echoed != nonce) {
    ::close(socket_);
    socket_ = -1;
    throw BackendError(answered ? fmt::format("{} answered no TCP store's ping: it is no torch TCP store", address_)
                                : fmt::format("the TCP store at {} took the connection but did not answer its ping "
                                              "within {}",
                                              address_, seconds_text(timeout_)));
  }
}

TcpStoreClient::~TcpStoreClient() {
  if (socket_ >= 0) ::close(socket_);
}

void TcpStoreClient::send(std::string_view bytes) {
  if (socket_ < 0) throw BackendError(fmt::format("the connection to the TCP store at {} was closed", address_));
  while (!bytes.empty()) {
    const ssize_t sent = ::send(socket_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      throw BackendError(fmt::format("sending to the TCP store at {} failed: {}", address_,
                                     errno == EAGAIN || errno == EWOULDBLOCK
                                         ? fmt::format("it took nothing within {}", seconds_text(timeout_))
                                         : std::string(std::strerror(errno))));
    }
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
}

bool TcpStoreClient::receive(void* out, std::size_t size, Clock::time_point deadline, bool limited) {
  auto* at = static_cast<char*>(out);
  while (size > 0) {
    int wait_ms = -1;
    if (limited) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd ready{socket_, POLLIN, 0};
    const int polled = ::poll(&ready, 1, wait_ms);
    if (polled < 0 && errno != EINTR) {
      throw BackendError(fmt::format("waiting for the TCP store at {} failed: {}", address_, std::strerror(errno)));
    }
    if (polled <= 0) continue;
    const ssize_t got = ::recv(socket_, at, size, 0);
    if (got == 0) throw BackendError(fmt::format("the TCP store at {} closed the connection", address_));
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw BackendError(fmt::format("reading from the TCP store at {} failed: {}", address_, std::strerror(errno)));
    }
    at += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

void TcpStoreClient::receive(void* out, std::size_t size) {
  settle_ping();
  // A request's answer: the store answers at once, unless it is gone.
  if (!receive(out, size, deadline_after(Clock::now(), timeout_), is_limited(timeout_))) {
    throw TimeoutError(fmt::format("the TCP store at {} did not answer within {}", address_, seconds_text(timeout_)));
  }
}

void TcpStoreClient::set(std::string_view key, std::string_view value) {
  std::string request;
  append(request, Query::set);
  append_field(request, store_key(key));
  append_field(request, value);
  send(request);
}

// No answer, as set: the request goes out with whatever the caller asks next.
void TcpStoreClient::set_many(const std::vector<std::pair<std::string, std::string>>& values) {
  if (values.empty()) return;
  std::string request;
  append(request, Query::multi_set);
  append<std::uint64_t>(request, values.size());
  for (const auto& [key, value] : values) {
    append_field(request, store_key(key));
    append_field(request, value);
  }
  send(request);
}

std::string TcpStoreClient::get(std::string_view key) {
  std::string request;
  append(request, Query::get);
  append_field(request, store_key(key));
  send(request);
  std::uint64_t size = 0;
  receive(&size, sizeof size);
  std::string value(size, '\0');
  if (size > 0) receive(value.data(), size);
  return value;
}

std::vector<std::string> TcpStoreClient::get_many(const std::vector<std::string>& keys) {
  if (keys.empty()) return {};
  send(keys_request(Query::multi_get, keys));
  std::vector<std::string> values;
  values.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::uint64_t size = 0;
    receive(&size, sizeof size);
    std::string& value = values.emplace_back(size, '\0');
    if (size > 0) receive(value.data(), size);
  }
  return values;
}

std::int64_t TcpStoreClient::add(std::string_view key, std::int64_t delta) {
  std::string request;
  append(request, Query::add);
  append_field(request, store_key(key));
  append(request, delta);
  send(request);
  std::int64_t value = 0;
  receive(&value, sizeof value);
  return value;
}

// Every add written at once, then every answer read: one round trip.
std::vector<std::int64_t> TcpStoreClient::add_many(const std::vector<std::pair<std::string, std::int64_t>>& deltas) {
  std::string request;
  for (const auto& [key, delta] : deltas) {
    append(request, Query::add);
    append_field(request, store_key(key));
    append(request, delta);
  }
  if (!request.empty()) send(request);
  std::vector<std::int64_t> values(deltas.size());
  for (std::int64_t& value : values) receive(&value, sizeof value);
  return values;
}

bool TcpStoreClient::check(const std::vector<std::string>& keys) {
  send(keys_request(Query::check, keys));
  std::uint8_t answer = 1;
  receive(&answer, sizeof answer);
  return answer == store_protocol::kReady;
}

bool TcpStoreClient::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  send(keys_request(Query::wait, keys));
  settle_ping();
  std::uint8_t answer = store_protocol::kWaitCanceled;
  if (receive(&answer, sizeof answer, deadline_after(Clock::now(), timeout), is_limited(timeout))) {
    return answer == store_protocol::kStopWaiting;
  }
  // Cancelled as torch's client cancels it: the server answers WAIT_CANCELED, after the
  // STOP_WAITING it may have sent as the keys arrived, so the connection stays in step.
  std::string cancel;
  append(cancel, Query::cancel_wait);
  send(cancel);
  receive(&answer, sizeof answer);
  if (answer == store_protocol::kStopWaiting) receive(&answer, sizeof answer);
  if (answer != store_protocol::kWaitCanceled) {
    throw BackendError(fmt::format("the TCP store at {} answered a cancelled wait with {}, not WAIT_CANCELED", address_,
                                   static_cast<int>(answer)));
  }
  return false;
}

}  // namespace pgroups
