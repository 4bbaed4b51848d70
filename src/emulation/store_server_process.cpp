#include "pgroups/emulation/store_server_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pgroups/common/error.hpp"
#include "pgroups/emulation/store_traffic_emulation.hpp"
#include "pgroups/launch/tcp_store.hpp"

namespace pgroups {
namespace {

// The child: serves until the parent closes its end of `keep_serving` (or dies), and
// tells the parent its port through `port_out` (0 when it could not listen).
[[noreturn]] void serve_until_told(int keep_serving, int port_out) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::uint16_t port = 0;
  try {
    const TcpStoreServer server(0, /*ipv6=*/false);
    port = server.port();
    (void)!::write(port_out, &port, sizeof port);
    ::close(port_out);
    char byte = 0;
    while (::read(keep_serving, &byte, 1) < 0 && errno == EINTR) {
    }
  } catch (...) {
    (void)!::write(port_out, &port, sizeof port);
  }
  ::_exit(0);
}

}  // namespace

StoreServerProcess::StoreServerProcess() {
  int keep[2] = {-1, -1};
  int told[2] = {-1, -1};
  if (::pipe2(keep, O_CLOEXEC) != 0 || ::pipe2(told, O_CLOEXEC) != 0) {
    throw BackendError(fmt::format("the store server's process: pipe: {}", std::strerror(errno)));
  }
  (void)raise_open_file_limit();  // the child inherits it
  pid_ = ::fork();
  if (pid_ < 0) throw BackendError(fmt::format("the store server's process: fork: {}", std::strerror(errno)));
  if (pid_ == 0) {
    ::close(keep[1]);
    ::close(told[0]);
    serve_until_told(keep[0], told[1]);
  }
  ::close(keep[0]);
  ::close(told[1]);
  keep_serving_ = keep[1];
  ssize_t got = -1;
  while ((got = ::read(told[0], &port_, sizeof port_)) < 0 && errno == EINTR) {
  }
  ::close(told[0]);
  if (got != sizeof port_ || port_ == 0) {
    this->~StoreServerProcess();
    throw BackendError("the store server's process could not listen on a port");
  }
}

StoreServerProcess::~StoreServerProcess() {
  if (keep_serving_ >= 0) ::close(keep_serving_);
  keep_serving_ = -1;
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

}  // namespace pgroups
