// TcpStoreServer (pgroups/launch/tcp_store.hpp): one thread, epoll over the listener, the
// connections and a wake pipe; every request parsed from a connection's buffer once it is
// whole. Nothing it does per request or per event visits the other connections: a wait is
// indexed by its keys, and a key's first set wakes that key's waiters alone, so that the
// store of a job of 10^4-10^5 ranks serves a request in time independent of the
// connections.

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
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

// What epoll's data says of a descriptor that is no connection (a connection's is its id).
constexpr std::uint64_t kWakePipe = 0;
constexpr std::uint64_t kListener = 1;
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
  std::uint64_t id = 0;  // never reused, unlike the descriptor
  std::string in;
  std::string out;
  std::vector<std::string> waiting_for;  // a wait not answered yet
  std::size_t keys_missing = 0;          // of waiting_for
  std::uint64_t wait_number = 0;         // which of its waits is the open one, for the index
  bool closing = false;
  std::uint32_t events = 0;   // what epoll watches on it now
  std::size_t accounted = 0;  // its in and out as last added to the server's total
  bool dirty = false;         // touched since the server last settled it
};

// A wait in the index of its keys: the connection's id and which of its waits it is, so
// that one cancelled, or one whose connection closed, is passed over.
struct Waiter {
  std::uint64_t connection = 0;
  std::uint64_t wait_number = 0;
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

  // The keys set for the first time since the last call: what may answer a wait.
  std::vector<std::string> take_new_keys() { return std::exchange(new_keys_, {}); }

  // The waits on `key`, taken out of the index.
  std::vector<Waiter> take_waiters(const std::string& key) {
    const auto found = waiters_.find(key);
    if (found == waiters_.end()) return {};
    std::vector<Waiter> waiters = std::move(found->second);
    waiters_.erase(found);
    return waiters;
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
        store(std::move(*key), std::move(*value));
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
        const bool fresh = values_.count(*key) == 0;
        std::string& text = values_[*key];
        if (fresh) new_keys_.push_back(*key);
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
          // Indexed by each key not there yet; the first set of the last one answers it.
          ++c.wait_number;
          c.keys_missing = 0;
          for (const std::string& key : keys) {
            if (values_.count(key) != 0) continue;
            waiters_[key].push_back({c.id, c.wait_number});
            ++c.keys_missing;
          }
          c.waiting_for = std::move(keys);
        }
        return true;
      }
      case Query::cancel_wait:
        // As torch's server: the wait (if one is still open) is dropped, and the answer is
        // WAIT_CANCELED whether or not STOP_WAITING went out before it.
        c.waiting_for.clear();  // its entries in the index are passed over by their wait number
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
    for (auto& [key, value] : values) store(std::move(key), std::move(value));
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

  // Sets `key`, noting a key that was not there (what may answer a wait).
  void store(std::string key, std::string value) {
    const auto [at, fresh] = values_.insert_or_assign(std::move(key), std::move(value));
    if (fresh) new_keys_.push_back(at->first);
  }

  std::map<std::string, std::string, std::less<>> values_;
  std::unordered_map<std::string, std::vector<Waiter>> waiters_;  // by a key not there yet
  std::vector<std::string> new_keys_;
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
  if (::bind(listener_, reinterpret_cast<const sockaddr*>(&address), length) != 0 ||
      ::listen(listener_, SOMAXCONN) != 0) {
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
  poller_ = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.u64 = kWakePipe;
  epoll_event listen{};
  listen.events = EPOLLIN;
  listen.data.u64 = kListener;
  if (poller_ < 0 || ::epoll_ctl(poller_, EPOLL_CTL_ADD, wake_[0], &wake) != 0 ||
      ::epoll_ctl(poller_, EPOLL_CTL_ADD, listener_, &listen) != 0) {
    const std::string error = std::strerror(errno);
    if (poller_ >= 0) ::close(poller_);
    ::close(wake_[0]);
    ::close(wake_[1]);
    ::close(listener_);
    throw BackendError(fmt::format("cannot watch the TCP store's sockets (epoll): {}", error));
  }
  thread_ = std::thread([this] { serve(); });
}

TcpStoreServer::~TcpStoreServer() {
  const char stop = 1;
  (void)!::write(wake_[1], &stop, 1);
  if (thread_.joinable()) thread_.join();
  ::close(poller_);
  ::close(wake_[0]);
  ::close(wake_[1]);
  ::close(listener_);
}

namespace {

// The server's connections and their share of its memory, with what epoll watches of each.
class Connections {
 public:
  Connections(int poller, KeyValues& store) : poller_(poller), store_(store) {}
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;
  ~Connections() {
    for (const auto& [id, c] : by_id_) ::close(c->fd);
  }

  void accept_from(int listener, int& reserve) {
    int fd = -1;
    while ((fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto c = std::make_unique<Connection>();
      c->fd = fd;
      c->id = next_id_++;
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = c->id;
      if (::epoll_ctl(poller_, EPOLL_CTL_ADD, fd, &event) != 0) {
        ::close(fd);
        continue;
      }
      c->events = EPOLLIN;
      by_id_.emplace(c->id, std::move(c));
    }
    if ((errno == EMFILE || errno == ENFILE) && reserve >= 0) {
      // Out of descriptors: the waiting peer is taken and closed at once (it may retry),
      // since one left waiting would keep the listener ready and this loop spinning.
      ::close(reserve);
      if ((fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC)) >= 0) ::close(fd);
      reserve = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
  }

  // What arrived on connection `id`, and the requests it makes whole.
  void receive(std::uint64_t id) {
    Connection* c = find(id);
    if (c == nullptr) return;
    touch(*c);
    if (!may_read(*c)) return;  // not watched for reading any more: settle() updates that
    try {
      // What arrived before the end of the stream is still handled (a last set).
      const bool open = read_some(*c);
      c->closing = !store_.handle(*c) || !open || c->in.size() > kLongestUnread;
    } catch (const Error&) {
      c->closing = true;  // a request no store carries: this peer is no client of ours
    }
  }

  void touch_id(std::uint64_t id) {
    if (Connection* c = find(id)) touch(*c);
  }

  // Every touched connection: the waits its keys answered, the requests queued behind
  // them or behind answers it owed, its answers written, what epoll watches, or its close.
  void settle() {
    while (!dirty_.empty()) {
      Connection* c = find(dirty_.back());
      dirty_.pop_back();
      if (c == nullptr) continue;
      c->dirty = false;
      if (!c->closing) handle(*c);
      wake_waiters();
      const bool owed_too_much = c->out.size() >= kMostOwed;
      if (!c->closing && !write_some(*c)) c->closing = true;
      if (c->closing) {
        close(*c);
        continue;
      }
      account(*c);
      // Answers drained below the bound: the requests held back behind them go on.
      if (owed_too_much && c->out.size() < kMostOwed && !c->in.empty()) touch(*c);
      watch(*c);
    }
    // Reading resumes for the connections held back by the total once it has fallen.
    if (buffered_ < kMostBuffered && !paused_.empty()) {
      for (const std::uint64_t id : std::exchange(paused_, {})) {
        if (Connection* c = find(id)) watch(*c);
      }
    }
  }

 private:
  Connection* find(std::uint64_t id) {
    const auto found = by_id_.find(id);
    return found == by_id_.end() ? nullptr : found->second.get();
  }

  void touch(Connection& c) {
    if (c.dirty) return;
    c.dirty = true;
    dirty_.push_back(c.id);
  }

  // A peer that owes reading its answers, or all together past the total, are not read.
  [[nodiscard]] bool may_read(const Connection& c) const {
    return buffered_ < kMostBuffered && c.out.size() < kMostOwed;
  }

  void handle(Connection& c) {
    try {
      if (!store_.handle(c)) c.closing = true;
    } catch (const Error&) {
      c.closing = true;
    }
  }

  // The waits answered by the keys set for the first time: each woken connection is
  // touched, so that the requests queued behind its wait go on.
  void wake_waiters() {
    for (const std::string& key : store_.take_new_keys()) {
      for (const Waiter& waiter : store_.take_waiters(key)) {
        Connection* c = find(waiter.connection);
        if (c == nullptr || c->wait_number != waiter.wait_number || c->waiting_for.empty()) continue;
        if (--c->keys_missing > 0) continue;
        c->waiting_for.clear();
        append(c->out, store_protocol::kStopWaiting);
        touch(*c);
      }
    }
  }

  void account(Connection& c) {
    const std::size_t now = c.in.size() + c.out.size();
    buffered_ = buffered_ + now - c.accounted;
    c.accounted = now;
  }

  void watch(Connection& c) {
    const bool read = may_read(c);
    if (!read && c.out.size() < kMostOwed) paused_.push_back(c.id);
    const std::uint32_t events = (read ? EPOLLIN : 0U) | (c.out.empty() ? 0U : EPOLLOUT);
    if (events == c.events) return;
    epoll_event event{};
    event.events = events;
    event.data.u64 = c.id;
    if (::epoll_ctl(poller_, EPOLL_CTL_MOD, c.fd, &event) == 0) c.events = events;
  }

  void close(Connection& c) {
    buffered_ -= c.accounted;
    ::epoll_ctl(poller_, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
    by_id_.erase(c.id);  // its entries in the index of waits are passed over
  }

  int poller_;
  KeyValues& store_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> by_id_;
  std::uint64_t next_id_ = kListener + 1;
  std::vector<std::uint64_t> dirty_;   // touched since the last settle()
  std::vector<std::uint64_t> paused_;  // not read while the total is past its bound
  std::size_t buffered_ = 0;           // every connection's in and out
};

}  // namespace

void TcpStoreServer::serve() {
  int reserve = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // a descriptor kept for refusing a peer
  KeyValues store;
  Connections connections(poller_, store);
  std::vector<epoll_event> events(1024);
  while (true) {
    const int ready = ::epoll_wait(poller_, events.data(), static_cast<int>(events.size()), -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    bool stop = false;
    for (int i = 0; i < ready; ++i) {
      const std::uint64_t id = events[static_cast<std::size_t>(i)].data.u64;
      const std::uint32_t what = events[static_cast<std::size_t>(i)].events;
      if (id == kWakePipe) {
        stop = true;
      } else if (id == kListener) {
        connections.accept_from(listener_, reserve);
      } else if ((what & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
        connections.receive(id);
      } else {
        connections.touch_id(id);  // writable: settle() writes
      }
    }
    if (stop) break;
    connections.settle();
  }
  if (reserve >= 0) ::close(reserve);
}

}  // namespace pgroups
