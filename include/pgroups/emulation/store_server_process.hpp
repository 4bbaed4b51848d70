#pragma once
/// \file
/// pgroups' TCP store server in a child process of its own, for the store emulation: its
/// descriptors then do not count against the emulating process's limit (one per
/// connection each side), and the two share the machine's cores as a launcher's store and
/// its ranks would.

#include <cstdint>

namespace pgroups {

class StoreServerProcess {
 public:
  /// Forks the child, which serves on a free port of every IPv4 address until this object
  /// is destroyed (or this process ends). BackendError when it cannot start.
  StoreServerProcess();
  /// Ends the child and waits for it.
  ~StoreServerProcess();
  StoreServerProcess(const StoreServerProcess&) = delete;
  StoreServerProcess& operator=(const StoreServerProcess&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

 private:
  int pid_ = -1;
  int keep_serving_ = -1;  // the child serves until this pipe's write end closes
  std::uint16_t port_ = 0;
};

}  // namespace pgroups
