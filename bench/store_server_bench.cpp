// store_server_bench: many ranks' store traffic from one process, against pgroups' own TCP
// store server (in this process) or any server of torch's protocol (--store HOST:PORT:
// torch's TCPStore, libuv). Each of --connections clients speaks as the env bootstrap's
// ranks do after connecting: the agreement by counters (two adds in one round trip; the
// last rank reads its digest's count and sets the verdict, the others wait for it and read
// it), then the exchange among members (groups of --group consecutive ranks: one
// MULTI_SET of what it sends each peer with a wait for what each peer sent it, then one
// MULTI_GET). One thread, non-blocking sockets under epoll, so that the server is what is
// measured.
//
//   store_server_bench --connections 8000 [--group 8] [--store 127.0.0.1:29500]
//
// Prints one JSON line: the connections, the seconds from the first request to the last
// answer, and the most turns of a connection. Connections need descriptors: two per
// client with the server in this process, one otherwise (ulimit -n).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "launch/store_protocol.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/launch/tcp_store.hpp"

namespace {

namespace protocol = pgroups::store_protocol;
using protocol::Query;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kSame = "agree/same/0";
constexpr std::string_view kArrived = "agree/arrived";
constexpr std::string_view kVerdict = "agree/verdict";

void request(std::string& out, Query query) { protocol::append(out, query); }
void field(std::string& out, std::string_view name) { protocol::append_field(out, "/" + std::string(name)); }

void add(std::string& out, std::string_view name, std::int64_t delta) {
  request(out, Query::add);
  field(out, name);
  protocol::append(out, delta);
}

void keys(std::string& out, Query query, const std::vector<std::string>& names) {
  request(out, query);
  protocol::append<std::uint64_t>(out, names.size());
  for (const std::string& name : names) field(out, name);
}

std::string share(int from, int to) { return "share/" + std::to_string(from) + "/" + std::to_string(to); }

// One emulated rank: its socket, what it still sends, what it has read, and the answers
// it waits for (a count of fixed bytes each, or -1 for a field: a 64-bit length and bytes).
struct Client {
  int fd = -1;
  int rank = 0;
  int step = 0;
  bool last = false;
  std::string out;
  std::string in;
  std::vector<int> expected;
  std::vector<std::string> answers;
  int turns = 0;
};

class Emulation {
 public:
  Emulation(int size, int group) : size_(size), group_(group) {}

  // `c`'s next request, from the answers to its last; false when it is done.
  bool next(Client& c) const {
    const std::vector<std::string> answers = std::move(c.answers);
    c.answers.clear();
    c.expected.clear();
    switch (c.step++) {
      case 0:  // connecting: torch's validation, then a ping
        request(c.out, Query::validate);
        protocol::append(c.out, protocol::kValidationMagic);
        request(c.out, Query::ping);
        protocol::append<std::uint32_t>(c.out, 7);
        c.expected = {4};
        return true;
      case 1:  // the agreement: its digest's count and the ranks come, in one turn
        add(c.out, kSame, 1);
        add(c.out, kArrived, 1);
        c.expected = {8, 8};
        return true;
      case 2: {
        std::int64_t arrived = 0;
        std::memcpy(&arrived, answers.at(1).data(), sizeof arrived);
        c.last = arrived == size_;
        if (c.last) {
          add(c.out, kSame, 0);
          c.expected = {8};
        } else {
          keys(c.out, Query::wait, {std::string(kVerdict)});
          c.expected = {1};
        }
        return true;
      }
      case 3:
        if (c.last) {
          request(c.out, Query::set);
          field(c.out, kVerdict);
          protocol::append_field(c.out, "same");
          return exchange(c);
        }
        request(c.out, Query::get);
        field(c.out, kVerdict);
        c.expected = {-1};
        return true;
      case 4: return exchange(c);
      case 5: {
        const std::vector<std::string> peers = peer_keys(c.rank);
        keys(c.out, Query::multi_get, peers);
        c.expected.assign(peers.size(), -1);
        return true;
      }
      default: return false;
    }
  }

 private:
  // What this rank sends each peer (one MULTI_SET, no answer) and the wait for theirs.
  bool exchange(Client& c) const {
    c.step = 5;
    std::string values;
    std::uint64_t count = 0;
    const int first = c.rank - c.rank % group_;
    for (int peer = first; peer < std::min(first + group_, size_); ++peer) {
      if (peer == c.rank) continue;
      field(values, share(c.rank, peer));
      protocol::append_field(values, std::string(25, 'a'));  // a compact gloo address
      ++count;
    }
    request(c.out, Query::multi_set);
    protocol::append(c.out, count);
    c.out += values;
    keys(c.out, Query::wait, peer_keys(c.rank));
    c.expected = {1};
    return true;
  }

  [[nodiscard]] std::vector<std::string> peer_keys(int rank) const {
    std::vector<std::string> names;
    const int first = rank - rank % group_;
    for (int peer = first; peer < std::min(first + group_, size_); ++peer) {
      if (peer != rank) names.push_back(share(peer, rank));
    }
    return names;
  }

  int size_;
  int group_;
};

// Parses the answers `c` waits for from what it read; true when all are there.
bool parse(Client& c) {
  std::size_t at = 0;
  std::vector<std::string> answers;
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
  c.in.erase(0, at);
  c.answers = std::move(answers);
  return true;
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

// Writes what `c` has to send; false on an error.
bool flush(Client& c) {
  while (!c.out.empty()) {
    const ssize_t sent = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (sent < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
    c.out.erase(0, static_cast<std::size_t>(sent));
  }
  return true;
}

int run(int connections, int group, const std::string& host, int port, int stagger_ms) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    std::fprintf(stderr, "store_server_bench: %s is no IPv4 address\n", host.c_str());
    return 2;
  }
  const Emulation emulation(connections, group);
  const int poller = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<Client> clients(static_cast<std::size_t>(connections));
  const auto start = Clock::now();
  for (int r = 0; r < connections; ++r) {
    // Ranks that start over time, as a job's do: a hundred every --stagger-ms.
    if (stagger_ms > 0 && r % 100 == 0 && r > 0) std::this_thread::sleep_for(std::chrono::milliseconds(stagger_ms));
    Client& c = clients[static_cast<std::size_t>(r)];
    c.rank = r;
    c.fd = connect_to(address);
    if (c.fd < 0) {
      std::fprintf(stderr, "store_server_bench: connection %d: %s\n", r, std::strerror(errno));
      return 1;
    }
    emulation.next(c);
    ++c.turns;
    epoll_event event{};
    event.events = EPOLLIN | EPOLLOUT;
    event.data.u32 = static_cast<std::uint32_t>(r);
    ::epoll_ctl(poller, EPOLL_CTL_ADD, c.fd, &event);
  }
  int finished = 0;
  std::vector<epoll_event> events(4096);
  char chunk[65536];
  while (finished < connections) {
    const int ready = ::epoll_wait(poller, events.data(), static_cast<int>(events.size()), 60000);
    if (ready <= 0) {
      std::fprintf(stderr, "store_server_bench: no answer for 60 s (%d of %d done)\n", finished, connections);
      return 1;
    }
    for (int i = 0; i < ready; ++i) {
      Client& c = clients[events[static_cast<std::size_t>(i)].data.u32];
      if (!flush(c)) return 1;
      ssize_t got = 0;
      while ((got = ::recv(c.fd, chunk, sizeof chunk, 0)) > 0) c.in.append(chunk, static_cast<std::size_t>(got));
      if (got == 0) {
        std::fprintf(stderr, "store_server_bench: the store closed connection %d\n", c.rank);
        return 1;
      }
      while (!c.expected.empty() && parse(c)) {
        if (!emulation.next(c)) {
          ++finished;
          ::epoll_ctl(poller, EPOLL_CTL_DEL, c.fd, nullptr);
          break;
        }
        ++c.turns;
        if (!flush(c)) return 1;
      }
      epoll_event event{};
      event.events = EPOLLIN | (c.out.empty() ? 0U : EPOLLOUT);
      event.data.u32 = static_cast<std::uint32_t>(c.rank);
      if (!c.expected.empty()) ::epoll_ctl(poller, EPOLL_CTL_MOD, c.fd, &event);
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  int most_turns = 0;
  for (Client& c : clients) {
    most_turns = std::max(most_turns, c.turns);
    ::close(c.fd);
  }
  ::close(poller);
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::printf("{\"connections\": %d, \"group\": %d, \"seconds\": %.3f, \"cpu_seconds\": %.3f, \"most_turns\": %d}\n",
              connections, group, seconds, cpu, most_turns);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int connections = 1000;
  int group = 8;
  std::string store;
  int stagger_ms = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view option = argv[i];
    if (option == "--connections") connections = std::atoi(argv[i + 1]);
    if (option == "--group") group = std::atoi(argv[i + 1]);
    if (option == "--store") store = argv[i + 1];
    if (option == "--stagger-ms") stagger_ms = std::atoi(argv[i + 1]);
  }
  if (connections < 1 || group < 1) {
    std::fprintf(stderr, "store_server_bench: --connections and --group must be positive\n");
    return 2;
  }
  try {
    if (!store.empty()) {
      const std::size_t colon = store.rfind(':');
      return run(connections, group, store.substr(0, colon), std::atoi(store.c_str() + colon + 1), stagger_ms);
    }
    const pgroups::TcpStoreServer server(0);
    return run(connections, group, "127.0.0.1", server.port(), stagger_ms);
  } catch (const pgroups::Error& error) {
    std::fprintf(stderr, "store_server_bench: %s\n", error.what());
    return 1;
  }
}
