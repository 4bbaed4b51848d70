#include "pgroups/gloo/gloo_groups.hpp"

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/barrier.h>
#include <gloo/common/error.h>
#include <gloo/context.h>
#include <gloo/transport/context.h>
#include <gloo/transport/tcp/device.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/launch/outcome.hpp"
#include "pgroups/launch/timeout.hpp"

namespace pgroups::gloo {
namespace {

constexpr std::string_view kConnectStep = "the connection of the gloo groups";

// A gloo context whose pairs pgroups connects itself: gloo's own rendezvous
// (rendezvous::Context::connectFullMesh) asks a store for every peer's address one key at
// a time, where pgroups has them all from one all-gather.
class ConnectedContext final : public ::gloo::Context {
 public:
  ConnectedContext(int local_rank, int members, const std::shared_ptr<::gloo::transport::Device>& device,
                   std::chrono::milliseconds timeout)
      : ::gloo::Context(local_rank, members) {
    device_ = device;
    transportContext_ = device->createContext(local_rank, members);
    transportContext_->setTimeout(timeout);
    setTimeout(timeout);
  }

  ::gloo::transport::Context& transport() { return *transportContext_; }
};

// gloo reports a timeout as an IoException whose message says so; the others are
// failures of the transport.
[[noreturn]] void rethrow_as_pgroups(const ::gloo::Exception& error, std::chrono::milliseconds timeout,
                                     std::string_view what) {
  const std::string message = error.what();
  if (message.find("Timed out") != std::string::npos || message.find("timed out") != std::string::npos) {
    throw TimeoutError(fmt::format("{} (gloo: {})", timeout_message(timeout, what), message));
  }
  throw BackendError(fmt::format("gloo failed during {}: {}", what, message));
}

// The first byte of a rank's part of the exchange.
constexpr char kAddresses = 'A';
constexpr char kFailed = 'F';

// One rank's addresses: per group entry, the count of its pairs, then each pair's
// address (towards the members in local-rank order, itself left out), length-prefixed.
void append_u32(std::string& out, std::size_t value) {
  const auto word = static_cast<std::uint32_t>(value);
  out.append(reinterpret_cast<const char*>(&word), sizeof word);
}

std::uint32_t read_u32(std::string_view bytes, std::size_t& at) {
  if (at + sizeof(std::uint32_t) > bytes.size()) throw BackendError("gloo: a rank's pair addresses are truncated");
  std::uint32_t word = 0;
  std::memcpy(&word, bytes.data() + at, sizeof word);
  at += sizeof word;
  return word;
}

// Every entry's pair addresses of one rank, by entry then pair.
std::vector<std::vector<std::vector<char>>> decode_addresses(std::string_view bytes, std::size_t entries) {
  std::vector<std::vector<std::vector<char>>> decoded(entries);
  std::size_t at = 0;
  for (auto& entry : decoded) {
    const std::uint32_t pairs = read_u32(bytes, at);
    for (std::uint32_t p = 0; p < pairs; ++p) {
      const std::uint32_t length = read_u32(bytes, at);
      if (at + length > bytes.size()) throw BackendError("gloo: a rank's pair addresses are truncated");
      entry.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                         bytes.begin() + static_cast<std::ptrdiff_t>(at + length));
      at += length;
    }
  }
  return decoded;
}

// Without GLOO_SOCKET_IFNAME gloo takes the address of this machine's host name, and where
// the name does not resolve it ends the process (a segmentation fault inside its device):
// asked here first, so that the rank says what to set instead.
void require_host_address() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) name[0] = '\0';
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = ::getaddrinfo(name.data(), nullptr, &hints, &found);
  if (found != nullptr) ::freeaddrinfo(found);
  if (status != 0 || found == nullptr) {
    throw BackendError(fmt::format(
        "gloo cannot open its TCP device: this host's name {} does not resolve ({}); set GLOO_SOCKET_IFNAME to the "
        "network interface the ranks reach each other on (e.g. eth0), or give the name an address (/etc/hosts)",
        quoted_excerpt(name.data()), status != 0 ? ::gai_strerror(status) : "no address"));
  }
}

std::int64_t position_of(const std::vector<std::int64_t>& members, std::int64_t rank) {
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i] == rank) return static_cast<std::int64_t>(i);
  }
  return -1;
}

}  // namespace

std::shared_ptr<::gloo::transport::Device> open_device(const EnvironmentLookup& lookup) {
  ::gloo::transport::tcp::attr attr;
  const std::optional<std::string> iface = environment_text(lookup, "GLOO_SOCKET_IFNAME");
  if (iface && !iface->empty()) attr.iface = *iface;
  if (attr.iface.empty()) require_host_address();
  try {
    return ::gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& error) {
    throw BackendError(fmt::format("gloo could not open its TCP device on {}: {}",
                                   attr.iface.empty() ? std::string("this machine's host name")
                                                      : fmt::format("interface '{}' (GLOO_SOCKET_IFNAME)", attr.iface),
                                   error.what()));
  }
}

std::vector<std::shared_ptr<::gloo::Context>> connect_groups(Bootstrap& bootstrap, const EnvironmentLookup& lookup,
                                                             const std::vector<std::vector<std::int64_t>>& groups,
                                                             std::chrono::milliseconds timeout) {
  const std::int64_t me = bootstrap.rank();
  const std::chrono::milliseconds limit = wait_limit(timeout);
  std::vector<std::shared_ptr<ConnectedContext>> contexts(groups.size());
  // This rank's part of the exchange: kAddresses then its pairs' addresses, or, where its
  // own preparation failed (its device, its pairs), kFailed then the message, so that the
  // others learn it in the same exchange instead of waiting for it until the timeout.
  std::string mine(1, kAddresses);
  std::exception_ptr failure;
  try {
    const std::shared_ptr<::gloo::transport::Device> device = open_device(lookup);
    for (std::size_t entry = 0; entry < groups.size(); ++entry) {
      const std::vector<std::int64_t>& members = groups[entry];
      const std::int64_t position = position_of(members, me);
      if (position < 0) {
        append_u32(mine, 0);
        continue;
      }
      const int size = static_cast<int>(members.size());
      contexts[entry] = std::make_shared<ConnectedContext>(static_cast<int>(position), size, device, limit);
      append_u32(mine, members.size() - 1);
      for (int peer = 0; peer < size; ++peer) {
        if (peer == position) continue;
        const std::vector<char> address = contexts[entry]->transport().createPair(peer)->address().bytes();
        append_u32(mine, address.size());
        mine.append(address.begin(), address.end());
      }
    }
  } catch (const ::gloo::Exception& error) {
    failure =
        std::make_exception_ptr(BackendError(fmt::format("gloo failed during {}: {}", kConnectStep, error.what())));
  } catch (const Error&) {
    failure = std::current_exception();
  }
  if (failure) mine = std::string(1, kFailed) + message_of(failure);

  const std::vector<std::string> everyone = bootstrap.all_gather(mine, timeout, "the exchange of gloo addresses");
  std::vector<int> failed;
  for (std::size_t r = 0; r < everyone.size(); ++r) {
    if (everyone[r].empty() || everyone[r].front() != kAddresses) failed.push_back(static_cast<int>(r));
  }
  if (failure) std::rethrow_exception(failure);
  if (!failed.empty()) {
    const std::string& first = everyone[static_cast<std::size_t>(failed.front())];
    throw BackendError(
        failed_elsewhere(kConnectStep, failed, first.empty() ? std::string_view() : std::string_view(first).substr(1)));
  }
  std::vector<std::vector<std::vector<std::vector<char>>>> decoded(everyone.size());
  try {
    for (std::size_t entry = 0; entry < groups.size(); ++entry) {
      if (!contexts[entry]) continue;
      const std::vector<std::int64_t>& members = groups[entry];
      const auto position = position_of(members, me);
      for (std::int64_t peer = 0; peer < static_cast<std::int64_t>(members.size()); ++peer) {
        if (peer == position) continue;
        const auto source = static_cast<std::size_t>(members[static_cast<std::size_t>(peer)]);
        if (decoded[source].empty()) {
          decoded[source] = decode_addresses(std::string_view(everyone.at(source)).substr(1), groups.size());
        }
        // The peer listed its pairs in local-rank order without itself.
        const auto index = static_cast<std::size_t>(position < peer ? position : position - 1);
        const auto& addresses = decoded[source][entry];
        if (index >= addresses.size()) {
          throw BackendError(
              fmt::format("gloo: rank {} holds another group of partition {} than rank {}", source, entry, me));
        }
        contexts[entry]->transport().getPair(static_cast<int>(peer))->connect(addresses[index]);
      }
    }
  } catch (const ::gloo::Exception& error) {
    rethrow_as_pgroups(error, timeout, kConnectStep);
  }
  // A pair's connect returns on one side before the other side has taken the connection
  // over; a rank that closed its contexts then (a job that ends at once) would break the
  // connection of a slower peer. No rank returns before every rank has connected.
  bootstrap.barrier(timeout, kConnectStep);
  return {contexts.begin(), contexts.end()};
}

int rank_in(const ::gloo::Context& context) noexcept { return context.rank; }

int size_of(const ::gloo::Context& context) noexcept { return context.size; }

std::vector<std::int64_t> all_gather(const std::shared_ptr<::gloo::Context>& context, std::int64_t value) {
  std::vector<std::int64_t> values(static_cast<std::size_t>(context->size));
  try {
    ::gloo::AllgatherOptions options(context);
    options.setInput(&value, 1);
    options.setOutput(values.data(), values.size());
    ::gloo::allgather(options);
  } catch (const ::gloo::Exception& error) {
    rethrow_as_pgroups(error, context->getTimeout(), "a gloo all-gather");
  }
  return values;
}

void barrier(const std::shared_ptr<::gloo::Context>& context) {
  try {
    ::gloo::BarrierOptions options(context);
    ::gloo::barrier(options);
  } catch (const ::gloo::Exception& error) {
    rethrow_as_pgroups(error, context->getTimeout(), "a gloo barrier");
  }
}

}  // namespace pgroups::gloo
