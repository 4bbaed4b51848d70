#include "pgroups/launch/bootstrap.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "pgroups/common/error.hpp"
#include "pgroups/common/printable.hpp"
#include "pgroups/launch/env_bootstrap.hpp"
#include "pgroups/launch/env_launch.hpp"
#include "pgroups/launch/pmix_bootstrap.hpp"
#include "store_protocol.hpp"

namespace pgroups {
namespace {

constexpr std::array<BootstrapKind, 4> kBootstraps = {BootstrapKind::automatic, BootstrapKind::mpi, BootstrapKind::pmix,
                                                      BootstrapKind::env};

// The makers the rooms above registered, by kind.
struct Makers {
  std::mutex mutex;
  std::map<BootstrapKind, BootstrapMaker> by_kind;
};

Makers& makers() {
  static Makers registered;
  return registered;
}

// A rank's shares of an exchange, as the default exchange gathers them: per share its
// name, the count of its members, then what it sends each, as the store protocol lays out
// fields (a 64-bit length, the bytes).
std::string encode_shares(const std::vector<GroupShare>& shares) {
  std::string out;
  for (const GroupShare& share : shares) {
    store_protocol::append_field(out, share.name);
    store_protocol::append<std::uint64_t>(out, share.to_each.size());
    for (const std::string& bytes : share.to_each) store_protocol::append_field(out, bytes);
  }
  return out;
}

using DecodedShares = std::map<std::string, std::vector<std::string>, std::less<>>;

DecodedShares decode_shares(std::string_view bytes, int from) {
  DecodedShares shares;
  std::size_t at = 0;
  const auto number = [&]() {
    std::uint64_t value = 0;
    if (bytes.size() - at < sizeof value) throw BackendError(fmt::format("rank {} sent a torn exchange", from));
    std::memcpy(&value, bytes.data() + at, sizeof value);
    at += sizeof value;
    return value;
  };
  const auto field = [&]() {
    const std::uint64_t length = number();
    if (bytes.size() - at < length) throw BackendError(fmt::format("rank {} sent a torn exchange", from));
    std::string out(bytes.substr(at, length));
    at += length;
    return out;
  };
  while (at < bytes.size()) {
    std::string name = field();
    std::vector<std::string>& to_each = shares[std::move(name)];
    const std::uint64_t count = number();
    if (count > bytes.size() - at) throw BackendError(fmt::format("rank {} sent a torn exchange", from));
    for (std::uint64_t i = 0; i < count; ++i) to_each.push_back(field());
  }
  return shares;
}

BootstrapMaker registered_maker(BootstrapKind kind) {
  Makers& all = makers();
  const std::lock_guard lock(all.mutex);
  const auto found = all.by_kind.find(kind);
  return found == all.by_kind.end() ? BootstrapMaker() : found->second;
}

std::string names_text() { return fmt::format("{}", fmt::join(bootstrap_names(), ", ")); }

}  // namespace

std::vector<std::string> bootstrap_names() {
  std::vector<std::string> names;
  for (const BootstrapKind kind : kBootstraps) names.emplace_back(bootstrap_name(kind));
  return names;
}

void register_bootstrap_maker(BootstrapKind kind, BootstrapMaker maker) {
  Makers& all = makers();
  const std::lock_guard lock(all.mutex);
  all.by_kind[kind] = std::move(maker);
}

std::unique_ptr<Bootstrap> start_bootstrap(BootstrapKind requested, std::chrono::milliseconds timeout,
                                           const EnvironmentLookup& lookup) {
  const BootstrapKind kind = choose_bootstrap(requested, lookup);
  if (kind == BootstrapKind::pmix) return make_pmix_bootstrap(lookup);
  if (kind == BootstrapKind::env) return make_env_bootstrap(timeout, lookup);
  return registered_maker(kind)(timeout);  // choose_bootstrap answers only kinds that are built
}

std::string_view bootstrap_name(BootstrapKind kind) noexcept {
  switch (kind) {
    case BootstrapKind::automatic: return "auto";
    case BootstrapKind::mpi: return "mpi";
    case BootstrapKind::pmix: return "pmix";
    case BootstrapKind::env: return "env";
    case BootstrapKind::callback: return "callback";
  }
  return "auto";
}

BootstrapKind parse_bootstrap(std::string_view text) {
  for (const BootstrapKind kind : kBootstraps) {
    if (bootstrap_name(kind) == text) return kind;
  }
  throw ConfigError(fmt::format("bootstrap {} is unknown: it is one of {}", quoted_excerpt(text), names_text()));
}

std::vector<BootstrapKind> built_bootstraps() {
  std::vector<BootstrapKind> built;
  for (const BootstrapKind kind : kBootstraps) {
    if (kind != BootstrapKind::automatic && bootstrap_built(kind)) built.push_back(kind);
  }
  return built;
}

BootstrapKind choose_bootstrap(BootstrapKind requested, const EnvironmentLookup& lookup) {
  if (requested == BootstrapKind::callback) {
    throw ConfigError(
        "bootstrap callback is a program's own (make_callback_bootstrap): it is made with the program's "
        "callbacks, never chosen; choose one of " +
        names_text());
  }
  if (requested != BootstrapKind::automatic) {
    if (!bootstrap_built(requested)) {
      throw ConfigError(
          fmt::format("bootstrap {} is not built into this pgroups (configure again with it: "
                      "libpmix-dev installed for pmix, -DPGROUPS_WITH_MPI=ON for mpi, whose front doors register it)",
                      bootstrap_name(requested)));
    }
    return requested;
  }
  const bool pmix_launched = bootstrap_built(BootstrapKind::pmix) && pmix_server_present(lookup);
  // An environment launch with no PMIx server: torchrun, a Kubernetes operator or a launch
  // by hand, where MPI would start as a world of one process. Its variables are checked
  // here, by the reader the env bootstrap uses, so that auto never chooses what the
  // bootstrap then refuses.
  const bool env_launched = is_env_launch(lookup);
  // torchrun's workers inherit the PMIx and MPI variables of a torchrun that srun or
  // mpirun started: they name the agent's process, and torchrun, the innermost launcher,
  // is this process's.
  if (env_launched && (!pmix_launched || is_torchrun_worker(lookup))) {
    (void)read_env_launch(lookup);
    return BootstrapKind::env;
  }
  if (!env_launched && !pmix_launched && environment_text(lookup, "RANK") && environment_text(lookup, "MASTER_ADDR")) {
    std::string missing;
    for (const char* name : kEnvLaunchVariables) {
      if (!environment_text(lookup, name)) missing += (missing.empty() ? "" : ", ") + std::string(name);
    }
    throw ConfigError(
        fmt::format("RANK and MASTER_ADDR are set, as in an environment launch, but {} {} not: an "
                    "environment launch gives RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT",
                    missing, missing.find(',') == std::string::npos ? "is" : "are"));
  }
  if (bootstrap_built(BootstrapKind::mpi)) return BootstrapKind::mpi;
  if (pmix_launched) return BootstrapKind::pmix;
  if (env_launched) return BootstrapKind::env;
  throw ConfigError(
      "no bootstrap applies to this process: pgroups was built without MPI, no PMIx server launched it, and "
      "it is no environment launch (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; start it with torchrun, srun "
      "--mpi=pmix or mpirun)");
}

std::string Bootstrap::broadcast(std::string_view bytes, int root, std::chrono::milliseconds timeout,
                                 std::string_view what) {
  std::vector<std::string> everyone = all_gather(rank() == root ? bytes : std::string_view(), timeout, what);
  return std::move(everyone.at(static_cast<std::size_t>(root)));
}

std::optional<std::vector<std::string>> Bootstrap::all_gather_if_differing(std::string_view bytes,
                                                                           std::chrono::milliseconds timeout,
                                                                           std::string_view what) {
  std::vector<std::string> everyone = all_gather(bytes, timeout, what);
  if (std::all_of(everyone.begin(), everyone.end(), [&](const std::string& other) { return other == bytes; })) {
    return std::nullopt;
  }
  return everyone;
}

std::vector<std::vector<std::string>> Bootstrap::exchange(const std::vector<GroupShare>& shares,
                                                          std::chrono::milliseconds timeout, std::string_view what) {
  const std::vector<std::string> everyone = all_gather(encode_shares(shares), timeout, what);
  std::map<int, DecodedShares> decoded;
  std::vector<std::vector<std::string>> answer;
  for (const GroupShare& share : shares) {
    std::vector<std::string>& received = answer.emplace_back(share.members.size());
    const auto mine = static_cast<std::size_t>(
        std::find(share.members.begin(), share.members.end(), std::int64_t{rank()}) - share.members.begin());
    for (std::size_t position = 0; position < share.members.size(); ++position) {
      if (position == mine) continue;
      const int from = static_cast<int>(share.members[position]);
      auto [entry, fresh] = decoded.try_emplace(from);
      if (fresh) entry->second = decode_shares(everyone.at(static_cast<std::size_t>(from)), from);
      const auto found = entry->second.find(share.name);
      if (found == entry->second.end() || found->second.size() != share.members.size()) {
        throw BackendError(
            fmt::format("during {}: rank {} holds another group {} than rank {}", what, from, share.name, rank()));
      }
      received[position] = std::move(found->second[mine]);
    }
  }
  return answer;
}

ExchangeAndAgreement Bootstrap::exchange_and_agree(const std::vector<GroupShare>& shares, std::string_view agreed,
                                                   std::chrono::milliseconds timeout, std::string_view what) {
  ExchangeAndAgreement both;
  both.received = exchange(shares, timeout, what);
  both.differing = all_gather_if_differing(agreed, timeout, what);
  return both;
}

bool bootstrap_built(BootstrapKind kind) noexcept {
  switch (kind) {
    case BootstrapKind::automatic:
    case BootstrapKind::env:
    case BootstrapKind::callback: return true;
    case BootstrapKind::mpi: return static_cast<bool>(registered_maker(kind));
    case BootstrapKind::pmix:
#ifdef PGROUPS_LAUNCH_WITH_PMIX
      return true;
#else
      return false;
#endif
  }
  return false;
}

}  // namespace pgroups
