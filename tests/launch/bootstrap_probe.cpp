// bootstrap_probe pmix|mpi|env [--stall RANK]: one process of a job started by a launcher,
// checking its bootstrap (pgroups/launch/bootstrap.hpp). Every rank all-gathers a text of
// its own (of a length that differs by rank) and checks every rank's, exchanges a text per
// peer within its pair of ranks and within the world, checking what each peer sent it,
// agrees on bytes that are the same and on bytes that differ, takes the last rank's
// broadcast, then enters a barrier; the node-local rank and size must
// be the launcher's (detect_launcher). Rank 0 prints "bootstrap <name> OK: <n> ranks". With --stall, that rank waits
// past the others' timeout (2 s) instead, so that they time out. An error is printed and ends the process with its exit
// code (docs/reference/errors.md).

#ifdef PGROUPS_PROBE_WITH_MPI
#include <mpi.h>

#include "pgroups/mpi/bootstrap.hpp"
#include "pgroups/mpi/communicator.hpp"
#endif

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/bootstrap.hpp"
#include "pgroups/launch/env_bootstrap.hpp"
#include "pgroups/launch/launcher.hpp"
#include "pgroups/launch/pmix_bootstrap.hpp"

namespace {

using namespace std::chrono_literals;

std::string text_of(int rank) { return "rank " + std::to_string(rank) + ":" + std::string(100 * rank, 'x'); }

std::string sent(std::int64_t from, std::int64_t to) { return std::to_string(from) + ">" + std::to_string(to); }

// The exchange among members: this rank's pair (2k, 2k + 1, where the world has both) and
// the world, each member sending each peer a text of their own.
bool exchange_checks(pgroups::Bootstrap& boot, std::chrono::seconds limit) {
  const std::int64_t me = boot.rank();
  std::vector<std::vector<std::int64_t>> groups;
  const std::int64_t first = me - me % 2;
  if (first + 1 < boot.size()) groups.push_back({first, first + 1});
  groups.emplace_back();
  for (std::int64_t r = boot.size() - 1; r >= 0; --r) groups.back().push_back(r);
  std::vector<pgroups::GroupShare> shares;
  for (const std::vector<std::int64_t>& members : groups) {
    pgroups::GroupShare& share = shares.emplace_back();
    share.name = members.size() == 2 ? "pair" + std::to_string(first) : "world";
    share.members = members;
    for (const std::int64_t member : members) share.to_each.push_back(member == me ? "" : sent(me, member));
  }
  const auto received = boot.exchange(shares, limit, "the probe's exchange");
  bool ok = received.size() == shares.size();
  for (std::size_t s = 0; ok && s < shares.size(); ++s) {
    for (std::size_t p = 0; ok && p < shares[s].members.size(); ++p) {
      const std::int64_t from = shares[s].members[p];
      ok = received[s].at(p) == (from == me ? "" : sent(from, me));
    }
  }
  return ok;
}

int probe(pgroups::Bootstrap& boot, int stall) {
  if (boot.rank() == stall) {
    std::this_thread::sleep_for(5s);
    return 0;
  }
  // 2 s where a rank stalls on purpose; otherwise room for a rank started late on a loaded machine.
  const std::chrono::seconds limit = stall >= 0 ? 2s : 20s;
  const auto gathered = boot.all_gather(text_of(boot.rank()), limit, "the probe's all-gather");
  bool ok = static_cast<int>(gathered.size()) == boot.size();
  for (int r = 0; ok && r < boot.size(); ++r) ok = gathered[static_cast<std::size_t>(r)] == text_of(r);
  ok = exchange_checks(boot, limit) && ok;
  ok = !boot.all_gather_if_differing("same", limit, "the probe's agreement") && ok;
  const int last = boot.size() - 1;
  ok = boot.broadcast(text_of(boot.rank()), last, limit, "the probe's broadcast") == text_of(last) && ok;
  const auto differing =
      boot.all_gather_if_differing(text_of(boot.rank() % 2), limit, "the probe's differing agreement");
  ok = ok && (boot.size() == 1 || (differing && differing->size() == static_cast<std::size_t>(boot.size()) &&
                                   differing->back() == text_of((boot.size() - 1) % 2)));
  boot.barrier(limit, "the probe's barrier");
  const pgroups::LauncherInfo launcher = pgroups::detect_launcher();
  if (launcher.local_rank && launcher.local_size) {
    ok = ok && *launcher.local_rank == boot.local_rank() && *launcher.local_size == boot.local_size();
  }
  if (!ok) {
    std::fprintf(stderr, "bootstrap_probe: rank %d: the all-gather, the exchange or the node's ranks are wrong\n",
                 boot.rank());
    return 1;
  }
  if (boot.rank() == 0) {
    std::printf("bootstrap %s OK: %d ranks\n", std::string(pgroups::bootstrap_name(boot.kind())).c_str(), boot.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bootstrap_probe pmix|mpi|env [--stall RANK]\n");
    return 2;
  }
  const int stall = argc >= 4 && std::string_view(argv[2]) == "--stall" ? std::stoi(argv[3]) : -1;
  int status = 0;
  try {
    const pgroups::BootstrapKind kind = pgroups::parse_bootstrap(argv[1]);
    if (kind == pgroups::BootstrapKind::mpi) {
#ifdef PGROUPS_PROBE_WITH_MPI
      MPI_Init(&argc, &argv);
      {
        pgroups::mpi::MpiBootstrap boot(pgroups::mpi::Communicator::borrow(MPI_COMM_WORLD));
        status = probe(boot, stall);
      }
      MPI_Finalize();
#else
      throw pgroups::ConfigError("bootstrap_probe was built without MPI");
#endif
    } else {  // launch's one door
      const std::unique_ptr<pgroups::Bootstrap> boot = pgroups::start_bootstrap(kind, 10s);
      status = probe(*boot, stall);
    }
  } catch (const pgroups::Error& error) {
    std::fprintf(stderr, "bootstrap_probe: error: %s\n", error.what());
    std::fflush(stderr);
    return static_cast<int>(error.exit_code());
  }
  return status;
}
