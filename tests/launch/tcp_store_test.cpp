// pgroups' TCP store server (pgroups/launch/tcp_store.hpp) against its own client, and
// against a peer that breaks the protocol: each such request closes that peer's
// connection alone, and the store goes on serving every other client.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/tcp_store.hpp"

namespace pgroups {
namespace {

using std::chrono_literals::operator""s;

constexpr std::uint8_t kSet = 1;
constexpr std::uint8_t kGet = 3;
constexpr std::uint8_t kAdd = 4;
constexpr std::uint8_t kWait = 6;
constexpr std::uint8_t kMultiGet = 10;
constexpr std::uint8_t kMultiSet = 11;

// A peer that writes raw requests in torch's protocol (the query byte, then each field as
// its 64-bit length and its bytes).
class RawPeer {
 public:
  explicit RawPeer(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    const timeval limit{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  }
  ~RawPeer() { ::close(fd_); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }

  RawPeer& query(std::uint8_t kind) { return raw(&kind, sizeof kind); }
  template <typename T>
  RawPeer& value(T number) {
    return raw(&number, sizeof number);
  }
  RawPeer& field(std::string_view bytes) {
    value<std::uint64_t>(bytes.size());
    return raw(bytes.data(), bytes.size());
  }
  // Sends what was written; false when the store closed the connection first.
  bool send() {
    std::size_t at = 0;
    while (at < pending_.size()) {
      const ssize_t sent = ::send(fd_, pending_.data() + at, pending_.size() - at, MSG_NOSIGNAL);
      if (sent <= 0) return false;
      at += static_cast<std::size_t>(sent);
    }
    pending_.clear();
    return true;
  }
  // Whether the store closed this connection (the end of the stream, or a reset) within
  // the receive limit, reading past any answers it sent before.
  bool closed_by_the_store() {
    char chunk[4096];
    while (true) {
      const ssize_t got = ::recv(fd_, chunk, sizeof chunk, 0);
      if (got == 0) return true;
      if (got < 0) return errno == ECONNRESET;
    }
  }

 private:
  RawPeer& raw(const void* bytes, std::size_t size) {
    pending_.append(static_cast<const char*>(bytes), size);
    return *this;
  }

  int fd_;
  bool connected_ = false;
  std::string pending_;
};

TEST(TcpStore, ItsClientSetsGetsAddsChecksAndWaits) {
  TcpStoreServer server(0);
  TcpStoreClient client("127.0.0.1", server.port(), 10s);
  client.set("a", "1");
  EXPECT_EQ(client.get("a"), "1");
  EXPECT_EQ(client.add("n", 5), 5);
  EXPECT_EQ(client.add("n", -7), -2);
  EXPECT_TRUE(client.check({"a", "n"}));
  EXPECT_FALSE(client.check({"a", "absent"}));
  EXPECT_TRUE(client.wait({"a"}, 1s));
  EXPECT_FALSE(client.wait({"absent"}, std::chrono::milliseconds(100)));
}

// MULTI_GET, torch's one request for many keys (the all-gathers' reads): the values in the
// order asked, and the same through a prefix.
TEST(TcpStore, ItsClientGetsManyKeysInOneRequest) {
  TcpStoreServer server(0);
  TcpStoreClient client("127.0.0.1", server.port(), 10s);
  client.set("k/0", "zero");
  client.set("k/1", "");
  client.set("k/2", std::string(100000, 'z'));
  const std::vector<std::string> values = client.get_many({"k/2", "k/0", "k/1", "k/0"});
  ASSERT_EQ(values.size(), 4U);
  EXPECT_EQ(values[0].size(), 100000U);
  EXPECT_EQ(values[1], "zero");
  EXPECT_EQ(values[2], "");
  EXPECT_EQ(values[3], "zero");
  EXPECT_TRUE(client.get_many({}).empty());
  PrefixStore prefixed("k/", client);
  EXPECT_EQ(prefixed.get_many({"0", "1"}), (std::vector<std::string>{"zero", ""}));
}

// MULTI_SET, torch's one request for many values (what a rank sends its groups' members):
// every value set, through a prefix too, and a wait on them answered.
TEST(TcpStore, ItsClientSetsManyKeysInOneRequestAndWakesAWaitOnThem) {
  TcpStoreServer server(0);
  TcpStoreClient client("127.0.0.1", server.port(), 10s);
  TcpStoreClient waiter("127.0.0.1", server.port(), 10s);
  bool woken = false;
  std::thread waiting([&] { woken = waiter.wait({"m/a", "m/b", "m/c"}, 10s); });
  client.set_many({{"m/a", "1"}, {"m/b", ""}});
  PrefixStore prefixed("m/", client);
  prefixed.set_many({{"c", std::string(70000, 'c')}});
  waiting.join();
  EXPECT_TRUE(woken);
  const std::vector<std::string> values = client.get_many({"m/a", "m/b", "m/c"});
  EXPECT_EQ(values[0], "1");
  EXPECT_EQ(values[1], "");
  EXPECT_EQ(values[2].size(), 70000U);
  client.set_many({});
  EXPECT_EQ(client.get("m/a"), "1");
}

// A MULTI_SET torn by its peer's end sets none of its values.
TEST(TcpStore, AMultiSetTornByItsPeersEndSetsNothing) {
  TcpStoreServer server(0);
  {
    RawPeer peer(server.port());
    ASSERT_TRUE(peer.connected());
    peer.query(kMultiSet).value<std::uint64_t>(2).field("/torn/a").field("1").field("/torn/b");
    ASSERT_TRUE(peer.send());
  }
  TcpStoreClient client("127.0.0.1", server.port(), 10s);
  EXPECT_FALSE(client.check({"torn/a"}));
}

// A short MULTI_GET that names one large value many times would owe more than a connection
// may: that peer is closed, and the store goes on serving the others.
TEST(TcpStore, AManyKeyGetWhoseAnswerPassesWhatAPeerMayOweClosesThatPeer) {
  TcpStoreServer server(0);
  TcpStoreClient client("127.0.0.1", server.port(), 10s);
  client.set("big", std::string(std::size_t{1} << 20, 'x'));
  RawPeer hostile(server.port());
  ASSERT_TRUE(hostile.connected());
  hostile.query(kMultiGet).value<std::uint64_t>(64);
  for (int i = 0; i < 64; ++i) hostile.field("/big");
  ASSERT_TRUE(hostile.send());
  EXPECT_TRUE(hostile.closed_by_the_store());
  EXPECT_EQ(client.get("big").size(), std::size_t{1} << 20);
}

// A store whose host drops the connection's packets: a listener whose backlog is full
// drops every new SYN, as a firewall that drops does. The client's connect ends within its
// timeout and a second, not after the kernel's SYN retries (minutes).
TEST(TcpStore, AConnectToAHostThatDropsPacketsEndsWithinTheTimeout) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 0), 0);
  socklen_t length = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  std::vector<int> fillers;  // never accepted: the backlog stays full
  for (int i = 0; i < 3; ++i) {
    fillers.push_back(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0));
    (void)::connect(fillers.back(), reinterpret_cast<const sockaddr*>(&address), sizeof address);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    TcpStoreClient client("127.0.0.1", ntohs(address.sin_port), 2s);
  } catch (const BackendError& error) {
    message = error.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_NE(message.find("within 2 s"), std::string::npos) << message;
  for (const int fd : fillers) ::close(fd);
  ::close(listener);
}

// This process's resident memory, in MiB.
double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// Clients that send small requests for a large answer and never read: the serving rank's
// memory stays bounded (16 MiB owed per peer, 256 MiB in all; unbounded it would hold
// 8 x 40 x 8 MiB = 2.5 GiB), and a client that reads is still served meanwhile.
TEST(TcpStore, ClientsThatAskForLargeAnswersAndNeverReadCannotGrowTheServersMemory) {
  TcpStoreServer server(0);
  TcpStoreClient reader("127.0.0.1", server.port(), 30s);
  reader.set("big", std::string(std::size_t{8} << 20, 'x'));
  const double before = resident_mib();
  std::vector<std::unique_ptr<RawPeer>> hostile;
  for (int c = 0; c < 8; ++c) {
    hostile.push_back(std::make_unique<RawPeer>(server.port()));
    for (int i = 0; i < 40; ++i) hostile.back()->query(kGet).field("/big");  // the client's key, as torch stores it
    ASSERT_TRUE(hostile.back()->send());
  }
  std::this_thread::sleep_for(1s);
  reader.set("after", "1");
  EXPECT_EQ(reader.get("after"), "1");
  const double grown = resident_mib() - before;
  EXPECT_LT(grown, 600.0) << "the server holds " << grown << " MiB more for peers that never read";
  std::printf("server memory under 8 clients that never read: +%.0f MiB\n", grown);
}

// What a host without IPv6 gets (its IPv6 socket refused): the server on IPv4 alone, which
// "localhost" still reaches (the client tries each of the name's addresses).
TEST(TcpStore, AServerOnIpv4AloneServesClientsOfLocalhostAsOnAHostWithoutIpv6) {
  TcpStoreServer server(0, /*ipv6=*/false);
  for (const char* host : {"127.0.0.1", "localhost"}) {
    TcpStoreClient client(host, server.port(), 10s);
    client.set(host, "served");
    EXPECT_EQ(client.get(host), "served") << host;
  }
}

TEST(TcpStore, ATimedOutWaitIsCancelledAndTheSameConnectionServesTheNextRequests) {
  TcpStoreServer server(0);
  TcpStoreClient waiter("127.0.0.1", server.port(), 10s);
  EXPECT_FALSE(waiter.wait({"late"}, std::chrono::milliseconds(100)));
  // The key arrives after the cancel: the store owes the waiter nothing more, so its next
  // answers are the next requests' own.
  TcpStoreClient writer("127.0.0.1", server.port(), 10s);
  writer.set("late", "x");
  EXPECT_EQ(waiter.add("n", 2), 2);
  EXPECT_EQ(waiter.get("late"), "x");
  EXPECT_TRUE(waiter.wait({"late"}, 1s));
  EXPECT_FALSE(waiter.check({"absent"}));
}

TEST(TcpStore, AnAddToAValueThatIsNoCounterClosesThatPeerAndTheStoreServesTheOthers) {
  TcpStoreServer server(0);
  RawPeer peer(server.port());
  ASSERT_TRUE(peer.connected());
  peer.query(kSet).field("/word").field("abc").query(kAdd).field("/word").value<std::int64_t>(1);
  ASSERT_TRUE(peer.send());
  EXPECT_TRUE(peer.closed_by_the_store());
  TcpStoreClient client("127.0.0.1", server.port(), 10s);
  EXPECT_EQ(client.get("word"), "abc");  // the refused add changed nothing
  EXPECT_EQ(client.add("n", 1), 1);
}

TEST(TcpStore, AnAddPast64BitsClosesThatPeerAndLeavesTheCounter) {
  TcpStoreServer server(0);
  TcpStoreClient client("127.0.0.1", server.port(), 10s);
  EXPECT_EQ(client.add("n", INT64_MAX), INT64_MAX);
  RawPeer peer(server.port());
  peer.query(kAdd).field("/n").value<std::int64_t>(1);
  ASSERT_TRUE(peer.send());
  EXPECT_TRUE(peer.closed_by_the_store());
  EXPECT_EQ(client.add("n", 0), INT64_MAX);
}

TEST(TcpStore, AFieldOverItsLimitClosesThatPeerBeforeItIsRead) {
  TcpStoreServer server(0);
  RawPeer peer(server.port());
  peer.query(kSet).value<std::uint64_t>(std::uint64_t{1} << 40);
  ASSERT_TRUE(peer.send());
  EXPECT_TRUE(peer.closed_by_the_store());
}

TEST(TcpStore, APeerThatSendsMoreThanOneRequestBehindAWaitIsClosed) {
  TcpStoreServer server(0);
  RawPeer peer(server.port());
  // A wait the store cannot answer, then sets that it holds unread behind it: past one
  // longest request (two 64 MiB fields) the connection is closed, not its buffer grown.
  peer.query(kWait).value<std::uint64_t>(1).field("/never");
  const std::string value(std::size_t{8} << 20, 'x');
  bool sending = peer.send();
  for (int i = 0; sending && i < 32; ++i) sending = peer.query(kSet).field("/k").field(value).send();
  EXPECT_FALSE(sending) << "the store read 256 MiB queued behind a wait";
  EXPECT_TRUE(peer.closed_by_the_store());
  TcpStoreClient client("127.0.0.1", server.port(), 10s);
  EXPECT_FALSE(client.check({"k"}));
}

}  // namespace
}  // namespace pgroups
