#include "pgroups/launch/env_bootstrap.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/launcher.hpp"
#include "pgroups/launch/tcp_store.hpp"
#include "pgroups/launch/timeout.hpp"

namespace pgroups {
namespace {

// A variable the bootstrap cannot do without, read by the one reader's rule.
std::int64_t required_count(const EnvironmentLookup& lookup, std::string_view name, std::string_view why) {
  const EnvironmentCount count = environment_count(lookup, name);
  if (count.malformed()) throw ConfigError(count.problem);
  if (!count.value) throw ConfigError(fmt::format("the env bootstrap needs {} ({}), which is not set", name, why));
  return *count.value;
}

class EnvBootstrap final : public Bootstrap {
 public:
  EnvBootstrap(const LauncherInfo& launcher, const std::string& host, std::uint16_t port, std::string prefix,
               std::chrono::milliseconds timeout, std::unique_ptr<TcpStoreServer> server)
      : server_(std::move(server)),
        rank_(static_cast<int>(*launcher.rank)),
        size_(static_cast<int>(*launcher.world_size)),
        local_rank_(static_cast<int>(*launcher.local_rank)),
        local_size_(static_cast<int>(*launcher.local_size)),
        host_(host),
        port_(port),
        prefix_(std::move(prefix)),
        timeout_(timeout),
        store_(std::make_unique<TcpStoreClient>(host, port, timeout)) {
    agree_on_the_world(timeout);
  }

  // The rank that serves the store keeps serving until every rank has left, so that no
  // rank loses the store while it still reads the last values.
  ~EnvBootstrap() override {
    try {
      client().set(fmt::format("{}/left/{}", prefix_, rank_), "");
      if (server_) {
        std::vector<std::string> keys;
        for (int r = 0; r < size_; ++r) keys.push_back(fmt::format("{}/left/{}", prefix_, r));
        (void)client().wait(keys, is_limited(timeout_) ? timeout_ : std::chrono::milliseconds(30'000));
      }
    } catch (...) {  // NOLINT(bugprone-empty-catch): a rank gone first leaves nothing to wait for
    }
  }

  [[nodiscard]] BootstrapKind kind() const noexcept override { return BootstrapKind::env; }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] int local_rank() const noexcept override { return local_rank_; }
  [[nodiscard]] int local_size() const noexcept override { return local_size_; }

  std::vector<std::string> all_gather(std::string_view bytes, std::chrono::milliseconds timeout,
                                      std::string_view what) override {
    const std::string round = fmt::format("{}/gather/{}", prefix_, rounds_++);
    std::vector<std::string> keys;
    keys.reserve(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) keys.push_back(fmt::format("{}/{}", round, r));
    client().set(keys[static_cast<std::size_t>(rank_)], bytes);
    if (!client().wait(keys, timeout)) {
      throw TimeoutError(timeout_message(timeout, what, "", rank_, size_, missing(keys)));
    }
    std::vector<std::string> gathered;
    gathered.reserve(keys.size());
    for (const std::string& key : keys) gathered.push_back(client().get(key));
    return gathered;
  }

  void barrier(std::chrono::milliseconds timeout, std::string_view what) override {
    // Every rank's arrival is a key of its own, so that a timeout names who did not come.
    (void)all_gather({}, timeout, what);
  }

 private:
  // Every rank's WORLD_SIZE must be rank 0's: a rank that holds another says so, instead of
  // waiting for ranks that will never come (rank 0 then times out naming it).
  void agree_on_the_world(std::chrono::milliseconds timeout) {
    client().set(fmt::format("{}/world/{}", prefix_, rank_), std::to_string(size_));
    const std::string first = fmt::format("{}/world/0", prefix_);
    if (!client().wait({first}, timeout)) {
      throw TimeoutError(timeout_message(timeout, "the start of the env bootstrap", "", rank_, size_, std::vector{0}));
    }
    const std::string size_of_rank0 = client().get(first);
    if (size_of_rank0 != std::to_string(size_)) {
      throw ConfigError(
          fmt::format("WORLD_SIZE is {} on rank {} but {} on rank 0: every rank of one job gives the same", size_,
                      rank_, size_of_rank0));
    }
  }

  TcpStoreClient& client() {
    // A timed-out wait closes the connection; a later collective opens a fresh one.
    if (!store_) store_ = std::make_unique<TcpStoreClient>(host_, port_, std::chrono::seconds(30));
    return *store_;
  }

  // The ranks whose key is not in the store, asked over a fresh connection (the store
  // still holds the timed-out wait on the old one).
  std::vector<int> missing(const std::vector<std::string>& keys) {
    store_.reset();
    std::vector<int> ranks;
    try {
      for (std::size_t r = 0; r < keys.size(); ++r) {
        if (!client().check({keys[r]})) ranks.push_back(static_cast<int>(r));
      }
    } catch (const Error&) {
      ranks.clear();  // the store is gone too: the message then names no rank
    }
    return ranks;
  }

  std::unique_ptr<TcpStoreServer> server_;  // rank 0's, when no launcher serves; outlives store_
  int rank_;
  int size_;
  int local_rank_;
  int local_size_;
  std::string host_;
  std::uint16_t port_;
  std::string prefix_;
  std::uint64_t rounds_ = 0;
  std::chrono::milliseconds timeout_;  // the bootstrap's own: connecting, and rank 0's wait for the others to leave
  std::unique_ptr<TcpStoreClient> store_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_env_bootstrap(std::chrono::milliseconds timeout, const EnvironmentLookup& lookup) {
  const LauncherInfo launcher = detect_launcher(lookup);
  if (!launcher.malformed.empty()) throw ConfigError(launcher.malformed.front());
  if (launcher.launcher != Launcher::torchrun || !launcher.rank || !launcher.world_size || !launcher.local_rank ||
      !launcher.local_size) {
    throw ConfigError(
        "the env bootstrap needs RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE as torchrun sets them (a rank "
        "below the world, a local rank below the node's)");
  }
  const std::optional<std::string> host = environment_text(lookup, "MASTER_ADDR");
  if (!host) throw ConfigError("the env bootstrap needs MASTER_ADDR (the TCP store's host), which is not set");
  const std::int64_t port = required_count(lookup, "MASTER_PORT", "the TCP store's port");
  if (port < 1 || port > 65535) {
    throw ConfigError(fmt::format("MASTER_PORT {} is no TCP port: it must be in 1..65535", port));
  }
  // Who serves follows TORCHELASTIC_USE_AGENT_STORE, not the launcher's name: torchrun's
  // agent, or else rank 0.
  const std::optional<std::string> agent = environment_text(lookup, "TORCHELASTIC_USE_AGENT_STORE");
  const bool agent_serves = agent && (*agent == "True" || *agent == "true" || *agent == "1");
  std::unique_ptr<TcpStoreServer> server;
  if (!agent_serves && *launcher.rank == 0) server = std::make_unique<TcpStoreServer>(static_cast<std::uint16_t>(port));
  const EnvironmentCount restart = environment_count(lookup, "TORCHELASTIC_RESTART_COUNT");
  if (restart.malformed()) throw ConfigError(restart.problem);
  const std::string prefix = fmt::format("pgroups/{}", restart.value.value_or(0));
  return std::make_unique<EnvBootstrap>(launcher, *host, static_cast<std::uint16_t>(port), prefix, timeout,
                                        std::move(server));
}

}  // namespace pgroups
