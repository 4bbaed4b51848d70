#include "pgroups/gloo/gloo_groups.hpp"

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/barrier.h>
#include <gloo/common/error.h>
#include <gloo/context.h>
#include <gloo/transport/context.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/device.h>

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
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

// The first byte of what a rank sends a peer in the exchange.
constexpr char kAddress = 'A';
constexpr char kFailed = 'F';

// A pair's address as it travels: kAddress, the socket address (as long as its family
// says: gloo's sockaddr_storage is mostly unused memory), then the sequence number, so that
// a peer costs tens of bytes.
std::string compact_address(const ::gloo::transport::Address& address) {
  const auto* tcp = dynamic_cast<const ::gloo::transport::tcp::Address*>(&address);
  if (tcp == nullptr) throw BackendError("gloo: a pair of pgroups' TCP device has no TCP address");
  const sockaddr_storage& socket = tcp->getSockaddr();
  const std::size_t length = socket.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  const ::gloo::transport::tcp::sequence_number_t sequence = tcp->getSeq();
  std::string out(1, kAddress);
  out.append(reinterpret_cast<const char*>(&socket), length);
  out.append(reinterpret_cast<const char*>(&sequence), sizeof sequence);
  return out;
}

// The address a pair connects to, from what compact_address sent.
std::vector<char> full_address(std::string_view bytes, std::int64_t from) {
  sockaddr_storage socket{};
  ::gloo::transport::tcp::sequence_number_t sequence = 0;
  if (bytes.size() < 1 + sizeof sequence || bytes.front() != kAddress ||
      bytes.size() - 1 - sizeof sequence > sizeof socket) {
    throw BackendError(fmt::format("gloo: rank {} sent no pair address in the exchange", from));
  }
  const std::size_t length = bytes.size() - 1 - sizeof sequence;
  std::memcpy(&socket, bytes.data() + 1, length);
  std::memcpy(&sequence, bytes.data() + 1 + length, sizeof sequence);
  return ::gloo::transport::tcp::Address(socket, sequence).bytes();
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
  // This rank's share of each of its groups with peers: kAddresses then its pairs'
  // addresses, or, where its own preparation failed (its device, its pairs), kFailed then
  // the message, so that its peers' exchange ends; the agreement after it tells everyone.
  std::vector<GroupShare> shares;
  std::vector<std::size_t> entry_of_share;
  for (std::size_t entry = 0; entry < groups.size(); ++entry) {
    if (groups[entry].size() < 2 || position_of(groups[entry], me) < 0) continue;
    // The entries have the same shape on every rank; a group of an entry is named by its
    // lowest rank.
    shares.push_back({fmt::format("{}.{}", entry, groups[entry].front()), groups[entry],
                      std::vector<std::string>(groups[entry].size())});
    entry_of_share.push_back(entry);
  }
  std::exception_ptr failure;
  try {
    const std::shared_ptr<::gloo::transport::Device> device = open_device(lookup);
    for (std::size_t entry = 0; entry < groups.size(); ++entry) {
      const std::int64_t position = position_of(groups[entry], me);
      if (position < 0) continue;
      const int size = static_cast<int>(groups[entry].size());
      contexts[entry] = std::make_shared<ConnectedContext>(static_cast<int>(position), size, device, limit);
    }
    for (std::size_t s = 0; s < shares.size(); ++s) {
      ConnectedContext& context = *contexts[entry_of_share[s]];
      for (int peer = 0; peer < context.size; ++peer) {
        if (peer == context.rank) continue;
        shares[s].to_each[static_cast<std::size_t>(peer)] =
            compact_address(context.transport().createPair(peer)->address());
      }
    }
  } catch (const ::gloo::Exception& error) {
    failure =
        std::make_exception_ptr(BackendError(fmt::format("gloo failed during {}: {}", kConnectStep, error.what())));
  } catch (const Error&) {
    failure = std::current_exception();
  }
  if (failure) {
    std::string failed(1, kFailed);
    failed += message_of(failure);
    for (GroupShare& share : shares) std::fill(share.to_each.begin(), share.to_each.end(), failed);
  }

  // A failed peer is seen by its groups' members only: every rank learns of it in the
  // agreement that comes with the exchange, before any connects to a peer that will not.
  const ExchangeAndAgreement both =
      bootstrap.exchange_and_agree(shares, outcome_text(failure), timeout, "the exchange of gloo addresses");
  require_success_in(both.differing, failure, kConnectStep);
  const std::vector<std::vector<std::string>>& received = both.received;
  try {
    for (std::size_t s = 0; s < shares.size(); ++s) {
      ConnectedContext& context = *contexts[entry_of_share[s]];
      for (int peer = 0; peer < context.size; ++peer) {
        if (peer == context.rank) continue;
        const auto from = static_cast<std::size_t>(peer);
        context.transport().getPair(peer)->connect(full_address(received[s][from], shares[s].members[from]));
      }
    }
    // A pair's connect returns on one side before the other side has taken the connection
    // over; a rank that closed its contexts then (a job that ends at once) would break the
    // connection of a slower peer. No rank returns before its groups' members have
    // connected: a barrier over each group's own pairs, with nothing through the store.
    for (const std::size_t entry : entry_of_share) {
      ::gloo::BarrierOptions options(contexts[entry]);
      ::gloo::barrier(options);
    }
  } catch (const ::gloo::Exception& error) {
    rethrow_as_pgroups(error, timeout, kConnectStep);
  }
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
