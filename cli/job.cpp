#include "job.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>

#include "output.hpp"
#include "pgroups/common/environment.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/backend.hpp"
#include "pgroups/launch/launcher.hpp"

namespace pgroups::cli {
namespace {

using Clock = std::chrono::steady_clock;

// A rank's status as it sent it: its exit code in decimal; -1 for anything else.
int exit_code_of(const std::string& status) {
  int code = -1;
  const char* const end = status.data() + status.size();
  const auto [stop, error] = std::from_chars(status.data(), end, code);
  return error == std::errc{} && stop == end && code >= 0 ? code : -1;
}

std::string host_name() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  return host.data();
}

// A job on a bootstrap that launch's door started. Every wait is the bootstrap's, gloo's
// or NCCL's polling, each bounded by the timeout, so no step is guarded.
class BootstrapJob final : public JobTransport {
 public:
  BootstrapJob(std::unique_ptr<Bootstrap> bootstrap, std::chrono::milliseconds timeout)
      : bootstrap_(std::move(bootstrap)), timeout_(timeout) {}

  [[nodiscard]] int rank() const override { return bootstrap_->rank(); }
  [[nodiscard]] int size() const override { return bootstrap_->size(); }
  [[nodiscard]] std::string_view name() const override { return bootstrap_name(bootstrap_->kind()); }
  [[nodiscard]] bool creates_mpi_groups() const override { return false; }

  std::optional<int> settle(const std::optional<LocalFailure>& failure) override {
    std::vector<std::string> statuses;
    try {
      const std::string mine = std::to_string(failure ? failure->code : 0);
      // Every rank's status travels only where they differ.
      statuses = bootstrap_->all_gather_if_differing(mine, timeout_, "the agreement on every rank's set-up")
                     .value_or(std::vector<std::string>(static_cast<std::size_t>(size()), mine));
    } catch (const TimeoutError& error) {
      print_job_error(rank(), false, error.what());
      return static_cast<int>(ExitCode::timeout);
    }
    std::vector<int> codes;
    for (std::size_t from = 0; from < statuses.size(); ++from) {
      codes.push_back(exit_code_of(statuses[from]));
      if (codes.back() < 0) {
        // Not this program's status: a process of another protocol on the same store.
        print_job_error(rank(), false,
                        fmt::format("rank {} sent '{}' where its exit status belongs: it does not run this "
                                    "program's protocol (another program on the same store?)",
                                    from, statuses[from].substr(0, 40)));
        codes.back() = static_cast<int>(ExitCode::backend);
      }
    }
    const auto [best, worst] = std::minmax_element(codes.begin(), codes.end());
    if (*worst == 0) return std::nullopt;
    if (failure) print_job_error(rank(), *best == *worst, failure->message);
    return *worst;
  }

  int end_step(const std::exception& error) override {
    const bool shared =
        dynamic_cast<const ConfigError*>(&error) != nullptr || dynamic_cast<const MismatchError*>(&error) != nullptr;
    print_job_error(rank(), shared, error.what());
    return exit_status_of(error);
  }

  std::shared_ptr<void> enter(const ContextOptions& options, const JobStep& step) override {
    if (options.before_step) options.before_step(step.name);
    return nullptr;
  }

  CreatedContext create(const ParallelConfig& config, const ContextOptions& options) override {
    const auto start = Clock::now();
    ParallelContext context(config, *bootstrap_, options);
    return {std::move(context), std::chrono::duration<double>(Clock::now() - start).count()};
  }

  void barrier(const JobStep& step) override { bootstrap_->barrier(timeout_, step.description); }

  std::vector<std::string> all_gather(std::string_view bytes, std::string_view what) override {
    return bootstrap_->all_gather(bytes, timeout_, what);
  }

  // The agreement, the addresses and the barrier after the connections: three exchanges.
  std::vector<Floor> floors(std::int64_t /*communicators*/) override {
    return {{"exchange", "3 x the bootstrap's all-gather", [this] {
               const auto start = Clock::now();
               for (int i = 0; i < 3; ++i) (void)bootstrap_->all_gather({}, timeout_, "the exchange floor");
               return std::chrono::duration<double>(Clock::now() - start).count();
             }}};
  }

  // A node is a host name and, where the launcher numbers nodes (Slurm, torchrun), the
  // node's index, since containers on several machines may share a host name.
  NodePlace node() override {
    const LauncherInfo launcher = detect_launcher();
    const std::string host = host_name();
    return {launcher.node ? fmt::format("{}#{}", host, *launcher.node) : host, host, bootstrap_->local_rank()};
  }

  [[nodiscard]] std::string local_rank_source() const override {
    return fmt::format("the {} bootstrap's node-local ranks", name());
  }

  void finish(const ContextOptions& options) override {
    (void)enter(options, {"finalize", "the end of the job"});
    bootstrap_->barrier(timeout_, "the end of the job");
  }

 private:
  std::unique_ptr<Bootstrap> bootstrap_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

int exit_status_of(const std::exception& error) {
  if (const auto* known = dynamic_cast<const Error*>(&error)) return static_cast<int>(known->exit_code());
  return static_cast<int>(ExitCode::internal);
}

void print_job_error(int rank, bool shared_by_all, const std::string& message) {
  if (shared_by_all) {
    if (rank == 0) std::fputs(error_line(message).c_str(), stderr);
  } else {
    std::fputs(error_line(message, fmt::format("pgroups: error on rank {}: ", rank)).c_str(), stderr);
  }
}

int status_after_report(int rank, const std::optional<IoError>& output_error, int status) {
  if (!output_error) return status;
  print_job_error(rank, true, output_error->what());
  return static_cast<int>(output_error->exit_code());
}

std::unique_ptr<JobTransport> bootstrap_job_transport(std::unique_ptr<Bootstrap> bootstrap,
                                                      std::chrono::milliseconds timeout) {
  return std::make_unique<BootstrapJob>(std::move(bootstrap), timeout);
}

std::unique_ptr<JobTransport> job_transport(std::string_view backend, std::string_view bootstrap,
                                            std::chrono::milliseconds timeout) {
  const BootstrapKind requested = parse_bootstrap(bootstrap);
  if (backend == "gloo") return bootstrap_job_transport(start_bootstrap(requested, timeout), timeout);
  // NCCL needs CPU groups beside it: MPI's under MPI, gloo's on any other bootstrap.
  if (backend == "nccl" && requested != BootstrapKind::mpi &&
      choose_bootstrap(requested, process_environment) != BootstrapKind::mpi) {
    require_backend_built(Backend::gloo);
    return bootstrap_job_transport(start_bootstrap(requested, timeout), timeout);
  }
  if (requested != BootstrapKind::automatic && requested != BootstrapKind::mpi) {
    throw ConfigError(
        fmt::format("--backend {} needs the MPI bootstrap, not --bootstrap {}: use --backend gloo or "
                    "nccl, which run on every bootstrap, or --bootstrap mpi under an MPI launcher",
                    backend, bootstrap));
  }
  return mpi_job_transport(timeout);
}

}  // namespace pgroups::cli
