// The TCP store server (pgroups/launch/tcp_store.hpp) under libFuzzer: any bytes a peer
// sends, on one connection to a server of this process, must be served, or refused by
// closing that connection, with no crash and no sanitizer report; the server serves the
// next connection whatever the last one sent. A peer left behind a wait is dropped after a
// short silence, as a client that gives up would.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "pgroups/launch/tcp_store.hpp"

namespace {

// A connect that a signal interrupts (libFuzzer's -timeout is a SIGALRM every second) goes
// on in the background: wait for it to finish, as a client that handles EINTR must.
int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0) std::abort();
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return fd;
  if (errno != EINTR) std::abort();
  for (pollfd ready{fd, POLLOUT, 0}; ::poll(&ready, 1, 10000) <= 0;) {
    if (errno != EINTR) std::abort();
  }
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) std::abort();
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static pgroups::TcpStoreServer server(0);
  const int fd = connect_to(server.port());
  for (std::size_t at = 0; at < size;) {
    const ssize_t sent = ::send(fd, data + at, size - at, MSG_NOSIGNAL);
    if (sent <= 0) break;  // the server closed this peer: a refusal
    at += static_cast<std::size_t>(sent);
  }
  ::shutdown(fd, SHUT_WR);
  // What the server answers, until it closes the connection or falls silent (a wait).
  char answer[65536];
  for (pollfd ready{fd, POLLIN, 0}; ::poll(&ready, 1, 20) > 0;) {
    if (::recv(fd, answer, sizeof answer, 0) <= 0) break;
  }
  ::close(fd);
  return 0;
}
