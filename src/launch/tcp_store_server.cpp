// TcpStoreServer (pgroups/launch/tcp_store.hpp): one thread, poll over the listener, the
// connections and a wake pipe; every request parsed from a connection's buffer once it is
// whole.

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/tcp_store.hpp"
#include "store_protocol.hpp"

namespace pgroups {
namespace {

using store_protocol::append;
using store_protocol::kLongestField;
using store_protocol::Query;

// The most unread bytes a connection may hold: one longest request (a set: its query, two
// lengths and two fields). A client of torch's protocol sends a request and reads its
// answer before the next, so more is a peer that sends without reading (behind a wait, say).
constexpr std::size_t kLongestUnread = 2 * kLongestField + 64;

// The most answer bytes a connection may owe before the server stops reading its requests
// (a small get of a large value, repeated without reading the answers, would otherwise grow
// the serving rank's memory without end), and the most bytes all connections may hold
// together before it stops reading any: every peer's share of the serving rank is bounded.
constexpr std::size_t kMostOwed = std::size_t{16} << 20;
constexpr std::size_t kMostBuffered = std::size_t{256} << 20;

// A connection's unread bytes, read field by field; `ok` turns false when the request is
// not whole yet (nothing is consumed then).
class Reader {
 public:
  explicit Reader(const std::string& buffer) : buffer_(buffer) {}
  template <typename T>
  std::optional<T> value() {
    if (buffer_.size() - at_ < sizeof(T)) return std::nullopt;
    T out;
    std::memcpy(&out, buffer_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return out;
  }
  // nullopt: not whole yet; throws for a length no request carries.
  std::optional<std::string> bytes() {
    const auto size = value<std::uint64_t>();
    if (!size) return std::nullopt;
    if (*size > kLongestField) throw BackendError("a TCP store request carries a field too long");
    if (buffer_.size() - at_ < *size) return std::nullopt;
    std::string out = buffer_.substr(at_, *size);
    at_ += *size;
    return out;
  }
  [[nodiscard]] std::size_t consumed() const noexcept { return at_; }

 private:
  const std::string& buffer_;
  std::size_t at_ = 0;
};

struct Connection {
  int fd = -1;
  std::string in;
  std::string out;
  std::vector<std::string> waiting_for;  // a wait not answered yet
  bool closing = false;
};

class KeyValues {
 public:
  // Handles every whole request at the head of `c.in`; false when the connection must close.
  bool handle(Connection& c) {
    // A connection behind a wait reads nothing but the wait's cancel_wait.
    while (!c.in.empty() && c.out.size() < kMostOwed &&
           (c.waiting_for.empty() || static_cast<Query>(c.in.front()) == Query::cancel_wait)) {
      Reader reader(c.in);
      const auto query = reader.value<std::uint8_t>();
      if (!query) return true;
      const std::optional<bool> done = one(static_cast<Query>(*query), reader, c);
      if (!done) return true;  // not whole yet
      if (!*done) return false;
      c.in.erase(0, reader.consumed());
    }
    return true;
  }

  // Answers the waits that every key now exists for.
  void wake(std::vector<Connection>& connections) {
    for (Connection& c : connections) {
      if (!c.waiting_for.empty() && all_set(c.waiting_for)) {
        c.waiting_for.clear();
        append(c.out, store_protocol::kStopWaiting);
      }
    }
  }

 private:
  // nullopt: the request is not whole; false: an unknown or invalid request.
  std::optional<bool> one(Query query, Reader& reader, Connection& c) {
    switch (query) {
      case Query::validate: {
        const auto magic = reader.value<std::uint32_t>();
        if (!magic) return std::nullopt;
        return *magic == store_protocol::kValidationMagic;
      }
      case Query::ping: {
        const auto nonce = reader.value<std::uint32_t>();
        if (!nonce) return std::nullopt;
        append(c.out, *nonce);
        return true;
      }
      case Query::set: {
        auto key = reader.bytes();
        if (!key) return std::nullopt;
        auto value = reader.bytes();
        if (!value) return std::nullopt;
        values_[*key] = std::move(*value);
        return true;
      }
      case Query::multi_set: return multi_set(reader);
      case Query::get: {
        const auto key = reader.bytes();
        if (!key) return std::nullopt;
        const auto found = values_.find(*key);
        const std::string value = found == values_.end() ? std::string() : found->second;
        append<std::uint64_t>(c.out, value.size());
        c.out += value;
        return true;
      }
      case Query::multi_get: return multi_get(reader, c);
      case Query::add: {
        const auto key = reader.bytes();
        if (!key) return std::nullopt;
        const auto delta = reader.value<std::int64_t>();
        if (!delta) return std::nullopt;
        std::string& text = values_[*key];
        std::int64_t sum = 0;
        if (__builtin_add_overflow(counter(*key, text), *delta, &sum)) {
          throw BackendError(
              fmt::format("adding {} to the TCP store counter '{}' ({}) overflows 64 bits", *delta, *key, text));
        }
        text = std::to_string(sum);
        append(c.out, sum);
        return true;
      }
      case Query::check:
      case Query::wait: {
        const auto count = reader.value<std::uint64_t>();
        if (!count) return std::nullopt;
        if (*count > kLongestField) return false;
        std::vector<std::string> keys;
        for (std::uint64_t i = 0; i < *count; ++i) {
          auto key = reader.bytes();
          if (!key) return std::nullopt;
          keys.push_back(std::move(*key));
        }
        const bool ready = all_set(keys);
        if (query == Query::check) {
          append(c.out, ready ? store_protocol::kReady : store_protocol::kNotReady);
        } else if (ready) {
          append(c.out, store_protocol::kStopWaiting);
        } else {
          c.waiting_for = std::move(keys);
        }
        return true;
      }
      case Query::cancel_wait:
        // As torch's server: the wait (if one is still open) is dropped, and the answer is
        // WAIT_CANCELED whether or not STOP_WAITING went out before it.
        c.waiting_for.clear();
        append(c.out, store_protocol::kWaitCanceled);
        return true;
    }
    return false;
  }

  // Every value, in the order asked, each as a get answers it. One answer is bounded as
  // the bytes a connection may owe are: a short request naming one large value many
  // times is refused, not served into the serving rank's memory.
  std::optional<bool> multi_get(Reader& reader, Connection& c) {
    const auto count = reader.value<std::uint64_t>();
    if (!count) return std::nullopt;
    if (*count > kLongestField) return false;
    std::vector<std::string> keys;
    std::size_t answer = 0;
    for (std::uint64_t i = 0; i < *count; ++i) {
      auto key = reader.bytes();
      if (!key) return std::nullopt;
      const auto found = values_.find(*key);
      answer += sizeof(std::uint64_t) + (found == values_.end() ? 0 : found->second.size());
      if (answer > kMostOwed) return false;
      keys.push_back(std::move(*key));
    }
    for (const std::string& key : keys) {
      const auto found = values_.find(key);
      const std::string_view value = found == values_.end() ? std::string_view() : found->second;
      append<std::uint64_t>(c.out, value.size());
      c.out += value;
    }
    return true;
  }

  // Sets only once the whole request is here, so that a torn one sets nothing.
  std::optional<bool> multi_set(Reader& reader) {
    const auto count = reader.value<std::uint64_t>();
    if (!count) return std::nullopt;
    if (*count > kLongestField) return false;
    std::vector<std::pair<std::string, std::string>> values;
    for (std::uint64_t i = 0; i < *count; ++i) {
      auto key = reader.bytes();
      if (!key) return std::nullopt;
      auto value = reader.bytes();
      if (!value) return std::nullopt;
      values.emplace_back(std::move(*key), std::move(*value));
    }
    for (auto& [key, value] : values) values_[key] = std::move(value);
    return true;
  }

  // The counter `key` holds as decimal text (0 when absent); BackendError for a value that
  // is no such number (a set by another kind of client).
  static std::int64_t counter(const std::string& key, const std::string& text) {
    if (text.empty()) return 0;
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc{} || stop != end) {
      throw BackendError(
          fmt::format("the TCP store key '{}' holds {} bytes that are no counter: add refused", key, text.size()));
    }
    return value;
  }

  [[nodiscard]] bool all_set(const std::vector<std::string>& keys) const {
    for (const std::string& key : keys) {
      if (!values_.count(key)) return false;
    }
    return true;
  }

  std::map<std::string, std::string, std::less<>> values_;
};

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Reads what has arrived, or as much as passes kLongestUnread; false at the end of the
// stream or an error.
bool read_some(Connection& c) {
  char chunk[65536];
  while (c.in.size() <= kLongestUnread) {
    const ssize_t got = ::recv(c.fd, chunk, sizeof chunk, 0);
    if (got > 0) {
      c.in.append(chunk, static_cast<std::size_t>(got));
      continue;
    }
    if (got == 0) return false;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  }
  return true;
}

// Writes what it can; false on an error.
bool write_some(Connection& c) {
  while (!c.out.empty()) {
    const ssize_t sent = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (sent < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c.out.erase(0, static_cast<std::size_t>(sent));
  }
  return true;
}

}  // namespace

TcpStoreServer::TcpStoreServer(std::uint16_t port, bool ipv6) {
  // IPv6 with IPv4 mapped, as torch's server listens, so that "localhost" reaches it either
  // way; IPv4 alone where the host has no IPv6 (the socket is refused).
  listener_ = ipv6 ? ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
  const bool v6 = listener_ >= 0;
  if (!v6) listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw BackendError(fmt::format("cannot open the TCP store's socket: {}", std::strerror(errno)));
  sockaddr_storage address{};
  socklen_t length = 0;
  if (v6) {
    const int off = 0;
    ::setsockopt(listener_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    auto& in6 = reinterpret_cast<sockaddr_in6&>(address);
    in6.sin6_family = AF_INET6;
    in6.sin6_addr = in6addr_any;
    in6.sin6_port = htons(port);
    length = sizeof in6;
  } else {
    auto& in4 = reinterpret_cast<sockaddr_in&>(address);
    in4.sin_family = AF_INET;
    in4.sin_addr.s_addr = htonl(INADDR_ANY);
    in4.sin_port = htons(port);
    length = sizeof in4;
  }
  if (::bind(listener_, reinterpret_cast<const sockaddr*>(&address), length) != 0 || ::listen(listener_, 1024) != 0) {
    const std::string error = std::strerror(errno);
    ::close(listener_);
    throw BackendError(fmt::format("cannot serve the TCP store on port {}: {}", port, error));
  }
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(v6 ? reinterpret_cast<const sockaddr_in6&>(address).sin6_port
                   : reinterpret_cast<const sockaddr_in&>(address).sin_port);
  if (::pipe2(wake_, O_CLOEXEC) != 0) {
    ::close(listener_);
    throw BackendError(fmt::format("cannot make the TCP store's pipe: {}", std::strerror(errno)));
  }
  set_nonblocking(listener_);
  thread_ = std::thread([this] { serve(); });
}

TcpStoreServer::~TcpStoreServer() {
  const char stop = 1;
  (void)!::write(wake_[1], &stop, 1);
  if (thread_.joinable()) thread_.join();
  ::close(wake_[0]);
  ::close(wake_[1]);
  ::close(listener_);
}

void TcpStoreServer::serve() {
  int reserve = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // a descriptor kept for refusing a peer
  KeyValues store;
  std::vector<Connection> connections;
  std::vector<pollfd> polled;
  while (true) {
    polled.clear();
    polled.push_back({wake_[0], POLLIN, 0});
    polled.push_back({listener_, POLLIN, 0});
    std::size_t buffered = 0;
    for (const Connection& c : connections) buffered += c.in.size() + c.out.size();
    for (const Connection& c : connections) {
      // A peer that owes reading its answers, or all together past the total, are not read.
      const bool read = buffered < kMostBuffered && c.out.size() < kMostOwed;
      polled.push_back({c.fd, static_cast<short>((read ? POLLIN : 0) | (c.out.empty() ? 0 : POLLOUT)), 0});
    }
    if (::poll(polled.data(), polled.size(), -1) < 0 && errno != EINTR) break;
    if (polled[0].revents != 0) break;
    if ((polled[1].revents & POLLIN) != 0) {
      int fd = -1;
      while ((fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        connections.push_back(Connection{fd, {}, {}, {}, false});
      }
      if ((errno == EMFILE || errno == ENFILE) && reserve >= 0) {
        // Out of descriptors: the waiting peer is taken and closed at once (it may retry),
        // since one left waiting would keep the listener ready and this loop spinning.
        ::close(reserve);
        if ((fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0) ::close(fd);
        reserve = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      }
    }
    // The connections polled, not those just accepted (the next round polls them).
    for (std::size_t i = 0; i + 2 < polled.size(); ++i) {
      Connection& c = connections[i];
      const short events = polled[i + 2].revents;
      if ((events & (POLLIN | POLLHUP | POLLERR)) != 0) {
        try {
          // What arrived before the end of the stream is still handled (a last set).
          const bool open = read_some(c);
          c.closing = !store.handle(c) || !open || c.in.size() > kLongestUnread;
        } catch (const Error&) {
          c.closing = true;  // a request no store carries: this peer is no client of ours
        }
      }
    }
    // A woken wait may have requests queued behind it.
    store.wake(connections);
    for (Connection& c : connections) {
      if (!c.closing && !c.in.empty() && c.waiting_for.empty()) {
        try {
          c.closing = !store.handle(c);
        } catch (const Error&) {
          c.closing = true;
        }
      }
    }
    store.wake(connections);
    for (Connection& c : connections) {
      if (!c.closing && !write_some(c)) c.closing = true;
      if (c.closing) ::close(c.fd);
    }
    std::erase_if(connections, [](const Connection& c) { return c.closing; });
  }
  for (const Connection& c : connections) ::close(c.fd);
  if (reserve >= 0) ::close(reserve);
}

}  // namespace pgroups
