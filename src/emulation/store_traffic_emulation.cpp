#include "pgroups/emulation/store_traffic_emulation.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "pgroups/common/error.hpp"
#include "rank_conversation.hpp"

namespace pgroups {
namespace {

using emulation_detail::Client;
using emulation_detail::Conversation;
using emulation_detail::kMostConnecting;
using emulation_detail::Step;
using Clock = std::chrono::steady_clock;

// The answers `c` waits for, once all are in; false until then.
bool parse(Client& c) {
  std::size_t at = c.in_read;
  std::vector<std::string> answers;
  answers.reserve(c.expected.size());
  for (const int expected : c.expected) {
    std::size_t length = 0;
    std::size_t skip = 0;
    if (expected >= 0) {
      length = static_cast<std::size_t>(expected);
    } else {
      std::uint64_t size = 0;
      if (c.in.size() - at < sizeof size) return false;
      std::memcpy(&size, c.in.data() + at, sizeof size);
      skip = sizeof size;
      length = size;
    }
    if (c.in.size() - at < skip + length) return false;
    answers.push_back(c.in.substr(at + skip, length));
    at += skip + length;
  }
  c.in_read = at;
  if (c.in_read == c.in.size()) {
    c.in.clear();
    c.in_read = 0;
  }
  c.answers = std::move(answers);
  c.expected.clear();
  return true;
}

double median(std::vector<std::int64_t> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? static_cast<double>(values[n / 2])
                    : (static_cast<double>(values[n / 2 - 1]) + static_cast<double>(values[n / 2])) / 2;
}

int connect_to(const sockaddr_in& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Writes what `c` has to send; false when the connection failed.
bool flush(Client& c) {
  while (!c.out.empty()) {
    const ssize_t sent = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (sent < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
    c.out.erase(0, static_cast<std::size_t>(sent));
  }
  return true;
}

// The clients and the one thread that drives them under epoll.
class Emulation {
 public:
  Emulation(const Layout& layout, const EmulationOptions& options) : conversation_(layout, options), options_(options) {
    const std::int64_t world = layout.world_size();
    const std::int64_t per = options.ranks_per_client;
    if (per < 1 || per > world) {
      throw ConfigError(
          fmt::format("ranks per store client {} is invalid: between 1 and the world size {}", per, world));
    }
    const std::int64_t clients = (world + per - 1) / per;
    const std::int64_t limit = raise_open_file_limit();
    if (clients + 64 > limit) {
      throw ConfigError(fmt::format(
          "{} store clients ({} ranks, {} per client) need more descriptors than this process may open ({}): put "
          "more ranks behind each client (a node relay)",
          clients, world, per, limit));
    }
    clients_.resize(static_cast<std::size_t>(clients));
    for (std::int64_t i = 0; i < clients; ++i) {
      Client& c = clients_[static_cast<std::size_t>(i)];
      c.first = i * per;
      c.ranks = std::min(per, world - c.first);
    }
    address_.sin_family = AF_INET;
    address_.sin_port = htons(options.port);
    if (::inet_pton(AF_INET, options.host.c_str(), &address_.sin_addr) != 1) {
      throw ConfigError(fmt::format("store host '{}' is invalid: an IPv4 address is needed", options.host));
    }
    poller_ = ::epoll_create1(EPOLL_CLOEXEC);
  }

  ~Emulation() {
    for (Client& c : clients_)
      if (c.fd >= 0) ::close(c.fd);
    if (poller_ >= 0) ::close(poller_);
  }
  Emulation(const Emulation&) = delete;
  Emulation& operator=(const Emulation&) = delete;

  EmulationResult run() {
    const auto start = Clock::now();
    auto last_progress = start;
    std::vector<epoll_event> events(4096);
    while (finished_ < clients_.size()) {
      open_more();
      const int ready = ::epoll_wait(poller_, events.data(), static_cast<int>(events.size()), 1000);
      if (ready < 0 && errno != EINTR) throw BackendError(fmt::format("epoll_wait: {}", std::strerror(errno)));
      if (ready > 0) last_progress = Clock::now();
      if (Clock::now() - last_progress > options_.silence_limit) {
        throw TimeoutError(
            fmt::format("store emulation: the store at {}:{} answered nothing for {} ms ({} of {} clients "
                        "done)",
                        options_.host, options_.port, options_.silence_limit.count(), finished_, clients_.size()));
      }
      for (int i = 0; i < ready; ++i) serve(clients_[events[static_cast<std::size_t>(i)].data.u64]);
    }
    return result(std::chrono::duration<double>(Clock::now() - start).count());
  }

 private:
  void open_more() {
    while (next_ < clients_.size() && connecting_ < kMostConnecting) {
      Client& c = clients_[next_];
      c.fd = connect_to(address_);
      if (c.fd < 0) {
        throw BackendError(fmt::format("store emulation: connection {} to {}:{}: {}", next_, options_.host,
                                       options_.port, std::strerror(errno)));
      }
      conversation_.advance(c);
      watch(c, next_, EPOLL_CTL_ADD);
      ++next_;
      ++connecting_;
    }
  }

  void watch(const Client& c, std::size_t index, int operation) const {
    epoll_event event{};
    event.events = EPOLLIN | (c.out.empty() ? 0U : static_cast<std::uint32_t>(EPOLLOUT));
    event.data.u64 = index;
    ::epoll_ctl(poller_, operation, c.fd, &event);
  }

  void serve(Client& c) {
    if (!flush(c)) fail(c, std::strerror(errno));
    char chunk[65536];
    ssize_t got = 0;
    while ((got = ::recv(c.fd, chunk, sizeof chunk, 0)) > 0) {
      c.in.append(chunk, static_cast<std::size_t>(got));
      c.bytes_read += got;
      c.heard = true;
    }
    if (got == 0) fail(c, "the store closed the connection");
    if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) fail(c, std::strerror(errno));
    while (!c.expected.empty() && parse(c)) {
      if (!c.connected) {  // the ping's answer
        c.connected = true;
        --connecting_;
      }
      conversation_.advance(c);
      if (!flush(c)) fail(c, std::strerror(errno));
    }
    const auto index = static_cast<std::size_t>(&c - clients_.data());
    if (c.step == Step::done && c.expected.empty() && c.out.empty()) {
      ::epoll_ctl(poller_, EPOLL_CTL_DEL, c.fd, nullptr);
      ::close(c.fd);
      c.fd = -1;
      ++finished_;
      return;
    }
    watch(c, index, EPOLL_CTL_MOD);
  }

  [[noreturn]] void fail(const Client& c, std::string_view why) const {
    throw BackendError(fmt::format("store emulation: the store at {}:{}, connection of ranks {}..{}: {}", options_.host,
                                   options_.port, c.first, c.first + c.ranks - 1, why));
  }

  [[nodiscard]] EmulationResult result(double seconds) const {
    EmulationResult out;
    out.ranks = 0;
    std::vector<std::int64_t> read;
    std::vector<std::int64_t> turns;
    for (const Client& c : clients_) {
      turns.push_back(c.turns);
      out.ranks += c.ranks;
      out.most_round_trips = std::max(out.most_round_trips, c.turns);
      out.requests += c.requests;
      out.bytes_sent += c.bytes_sent;
      out.bytes_read += c.bytes_read;
      read.push_back(c.bytes_read);
    }
    out.connections = static_cast<std::int64_t>(clients_.size());
    out.ranks_per_client = options_.ranks_per_client;
    out.seconds = seconds;
    out.most_bytes_read = *std::max_element(read.begin(), read.end());
    out.median_bytes_read = median(read);
    out.median_round_trips = median(turns);
    if (options_.traffic == EmulatedTraffic::new_group_loop) {
      out.groups = conversation_.groups();
      out.groups_emulated = conversation_.loop_groups();
    }
    return out;
  }

  Conversation conversation_;
  const EmulationOptions& options_;
  std::vector<Client> clients_;
  sockaddr_in address_{};
  int poller_ = -1;
  std::size_t next_ = 0;
  std::size_t connecting_ = 0;
  std::size_t finished_ = 0;
};

}  // namespace

EmulationResult emulate_store_traffic(const Layout& layout, const EmulationOptions& options) {
  Emulation emulation(layout, options);
  return emulation.run();
}

std::int64_t raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur == RLIM_INFINITY ? std::int64_t{1} << 30 : static_cast<std::int64_t>(limit.rlim_cur);
}

}  // namespace pgroups
