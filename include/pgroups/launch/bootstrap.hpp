#pragma once
/// \file
/// The bootstrap: what a job has before it has any communicator, from whatever started
/// its processes. It knows this process's rank, the world's size and the node-local rank
/// and size, and offers the two collectives the creation of groups needs out of band: an
/// all-gather of bytes and a barrier, each bounded by a timeout under the rules of
/// pgroups/launch/timeout.hpp (zero: no limit), so that no rank waits forever.
///
/// The implementations: MPI over any communicator (pgroups/mpi/bootstrap.hpp), and PMIx,
/// what `srun --mpi=pmix` and Open MPI's `mpirun` give every process, with no MPI in it
/// (pgroups/launch/pmix_bootstrap.hpp, when pgroups was built with PMIx).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pgroups/common/environment.hpp"

namespace pgroups {

/// Which bootstrap: `automatic` lets the launcher choose (choose_bootstrap); `callback`
/// is a program's own (pgroups/launch/callback_bootstrap.hpp), made, never chosen.
enum class BootstrapKind : std::uint8_t { automatic, mpi, pmix, env, callback };

/// "auto", "mpi", "pmix", "env", "callback".
[[nodiscard]] std::string_view bootstrap_name(BootstrapKind kind) noexcept;

/// The names a user gives (`--bootstrap`): auto, mpi, pmix, env, the one list every
/// option's choices and every message come from.
[[nodiscard]] std::vector<std::string> bootstrap_names();

/// The kind named `text` (a name of bootstrap_name); ConfigError naming the text and the
/// names otherwise.
[[nodiscard]] BootstrapKind parse_bootstrap(std::string_view text);

/// Whether this process can make a bootstrap of `kind`: PMIx when pgroups was built with
/// PMIx (libpmix-dev), MPI when the MPI room registered its maker (mpi::register_bootstrap,
/// which every front door built with MPI calls); `automatic` and `env` always.
[[nodiscard]] bool bootstrap_built(BootstrapKind kind) noexcept;

/// The bootstraps built into this pgroups (bootstrap_built), `automatic` left out.
[[nodiscard]] std::vector<BootstrapKind> built_bootstraps();

/// The bootstrap `requested` resolves to in this process (environment read through
/// `lookup`): itself unless `automatic`. `automatic` is the environment's for an
/// environment launch (is_env_launch, pgroups/launch/env_launch.hpp) that no PMIx server
/// launched (torchrun, a Kubernetes operator, a launch by hand: there MPI would start as
/// a world of one), its variables checked by the env bootstrap's own reader; otherwise
/// MPI when built (today's path, under any launcher of an MPI job), else PMIx when a PMIx
/// server launched this process, else the environment's. ConfigError naming the kind and
/// the rule for a kind not built; for `automatic`, naming the variable for a malformed
/// environment launch, the missing ones where RANK and MASTER_ADDR are set without the
/// rest, and the launchers when none applies.
[[nodiscard]] BootstrapKind choose_bootstrap(BootstrapKind requested, const EnvironmentLookup& lookup);

class Bootstrap;

/// This rank's part in one group of an exchange among members (Bootstrap::exchange).
struct GroupShare {
  /// The group's name in this exchange: the same on each of its members, different from
  /// every other group's.
  std::string name;
  /// The group's world ranks, this rank among them.
  std::vector<std::int64_t> members;
  /// What this rank sends each member, by position in `members` (its own entry unused).
  std::vector<std::string> to_each;
};

/// What Bootstrap::exchange_and_agree gives: the exchange's answer, and the agreement's.
struct ExchangeAndAgreement {
  std::vector<std::vector<std::string>> received;  ///< as exchange() returns it
  std::optional<std::vector<std::string>> differing;  ///< as all_gather_if_differing() returns it
};

/// What makes the bootstrap of one kind, given the resolved timeout. A room above launch
/// registers its own (the MPI room: mpi::register_bootstrap), so that launch knows none.
using BootstrapMaker = std::function<std::unique_ptr<Bootstrap>(std::chrono::milliseconds timeout)>;

/// Registers `maker` for `kind` (replacing one registered before). Thread-safe.
void register_bootstrap_maker(BootstrapKind kind, BootstrapMaker maker);

/// The one door to a bootstrap: choose_bootstrap(requested, lookup), then that kind's
/// maker (PMIx's, the environment's, or a registered one) with `timeout`, resolved
/// (pgroups/launch/timeout.hpp). The errors of choose_bootstrap and of the maker, on this
/// rank.
[[nodiscard]] std::unique_ptr<Bootstrap> start_bootstrap(BootstrapKind requested, std::chrono::milliseconds timeout,
                                                         const EnvironmentLookup& lookup = process_environment);

/// One process's view of the job before its communicators. Not copyable; every method
/// but the collectives is O(1) and never fails.
class Bootstrap {
 public:
  Bootstrap() = default;
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;
  virtual ~Bootstrap() = default;

  [[nodiscard]] virtual BootstrapKind kind() const noexcept = 0;
  [[nodiscard]] virtual int rank() const noexcept = 0;
  [[nodiscard]] virtual int size() const noexcept = 0;
  /// This process's index among the processes of its node, and their number.
  [[nodiscard]] virtual int local_rank() const noexcept = 0;
  [[nodiscard]] virtual int local_size() const noexcept = 0;

  /// Collective over the world: every rank's `bytes` (of any length), index = rank. Waits
  /// at most `timeout` for every rank (zero: no limit); TimeoutError (timeout_message,
  /// naming `what`, this rank and the world) when one has not arrived by then, BackendError
  /// when the transport fails.
  [[nodiscard]] virtual std::vector<std::string> all_gather(std::string_view bytes, std::chrono::milliseconds timeout,
                                                            std::string_view what) = 0;
  /// Collective over the world: returns once every rank has entered it, with the errors
  /// of all_gather.
  virtual void barrier(std::chrono::milliseconds timeout, std::string_view what) = 0;
  /// Collective over the world: rank `root`'s `bytes` on every rank (the others' are not
  /// read). Bounded as all_gather is. This default all-gathers; the env bootstrap's
  /// ranks read the root's key alone.
  [[nodiscard]] virtual std::string broadcast(std::string_view bytes, int root, std::chrono::milliseconds timeout,
                                              std::string_view what);
  /// Collective over the world: nullopt when every rank passed the same `bytes`, else
  /// every rank's bytes (index = rank), on every rank alike. Bounded as all_gather is.
  /// This default all-gathers and compares; the env bootstrap agrees by counters, so that
  /// a rank reads a few bytes whatever the world, and every rank's bytes only when they
  /// differ.
  [[nodiscard]] virtual std::optional<std::vector<std::string>> all_gather_if_differing(
      std::string_view bytes, std::chrono::milliseconds timeout, std::string_view what);
  /// Collective over the world (every rank calls it, with no share where it has none),
  /// though each group's bytes travel only among its members: per share, what each member
  /// sent this rank, by position (this rank's own entry empty). Bounded as all_gather is;
  /// the TimeoutError names the members that had not sent theirs. This default sends every
  /// rank's shares to every rank (one all_gather); the env bootstrap's reads only what is
  /// this rank's (what a rank reads grows with its groups, not with the world).
  [[nodiscard]] virtual std::vector<std::vector<std::string>> exchange(const std::vector<GroupShare>& shares,
                                                                       std::chrono::milliseconds timeout,
                                                                       std::string_view what);
  /// exchange(shares), then all_gather_if_differing(agreed), as one collective whose
  /// traffic a bootstrap may overlap: the env bootstrap sends the shares with the
  /// agreement's counters and reads them with its verdict, three round trips for both
  /// where they take five in turn. Bounded as all_gather is; the TimeoutError names the
  /// ranks that had not come. This default calls the two in turn.
  [[nodiscard]] virtual ExchangeAndAgreement exchange_and_agree(const std::vector<GroupShare>& shares,
                                                                std::string_view agreed,
                                                                std::chrono::milliseconds timeout,
                                                                std::string_view what);
};

}  // namespace pgroups
