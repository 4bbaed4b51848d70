// The bootstrap transport of a context's construction (transport.hpp): everything the one
// construction path needs of a bootstrap (pgroups/launch/bootstrap.hpp).

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gloo_kinds.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/context/bootstrap_agreement.hpp"
#include "pgroups/launch/outcome.hpp"
#include "transport.hpp"

namespace pgroups::detail {
namespace {

using Clock = std::chrono::steady_clock;

// Whether a context on a bootstrap connects gloo groups: the gloo backend's own, and the
// CPU groups beside NCCL's where gloo is built.
bool with_gloo(Backend backend) { return backend == Backend::gloo || backend_built(Backend::gloo); }

class BootstrapTransport final : public Transport {
 public:
  explicit BootstrapTransport(Bootstrap& bootstrap) : bootstrap_(bootstrap) {}

  [[nodiscard]] int rank() const override { return bootstrap_.rank(); }
  [[nodiscard]] int size() const override { return bootstrap_.size(); }
  [[nodiscard]] std::string_view world_name() const override { return "bootstrap"; }
  [[nodiscard]] std::string node_source() const override { return "bootstrap"; }

  [[nodiscard]] std::vector<CreationStep> steps(const Layout& /*layout*/, Backend backend) const override {
    if (backend == Backend::mpi) {
      throw ConfigError(fmt::format(
          "backend {} is built over an MPI communicator, not a bootstrap: use ParallelContext(config, MPI_Comm) "
          "(`pgroups verify --bootstrap mpi`), or backend gloo or nccl on the {} bootstrap",
          backend_name(backend), bootstrap_name(bootstrap_.kind())));
    }
    return bootstrap_creation_steps(backend == Backend::nccl, with_gloo(backend));
  }

  void start(std::chrono::milliseconds timeout) override { timeout_ = timeout; }
  void before_agreement(const ContextOptions& /*options*/) override {}

  // The bootstrap's all-gathers are bounded, so a rank that never arrives makes the others
  // throw TimeoutError here; every rank judges the same records, so all throw alike.
  void agree(const std::string& record) override {
    agree_over_bootstrap(bootstrap_, record, timeout_, "configuration");
  }

  [[nodiscard]] std::unique_ptr<StepGuard> guard(const CreationStep& /*step*/) override { return nullptr; }

  [[nodiscard]] NodeCount node() override { return {bootstrap_.local_size(), bootstrap_.local_rank()}; }

  [[nodiscard]] AgreeOnSuccess outcome() override {
    return [this](const std::exception_ptr& local, std::string_view what) {
      require_success_everywhere(bootstrap_, local, what, timeout_);
    };
  }

  void prepare(std::vector<KindGroup>& /*created*/, const Layout& /*layout*/) override {}

  // Every kind in one step (one exchange of addresses for all), whose time the world's
  // kind carries.
  void create(const CreationStep& /*step*/, const Layout& layout, std::vector<KindGroup>& created, LiveGroups& live,
              const ContextOptions& /*options*/) override {
    const auto start = Clock::now();
    connect_gloo_kinds(created, live.gloo_world, layout, bootstrap_.rank(), bootstrap_, timeout_);
    if (const std::optional<std::size_t> world = layout.world_kind()) {
      created[*world].creation_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    }
  }

  // Rank 0's bytes (an NCCL unique id, 128 bytes) to every rank, through the bootstrap's
  // broadcast.
  [[nodiscard]] WorldBroadcast world_broadcast() override {
    return [this](std::span<std::byte> bytes) {
      const std::string mine(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      const std::string root = bootstrap_.broadcast(mine, 0, timeout_, "the NCCL unique id");
      if (root.size() != bytes.size()) {
        throw BackendError(fmt::format("rank 0 sent an NCCL unique id of {} bytes, not {}", root.size(), bytes.size()));
      }
      std::memcpy(bytes.data(), root.data(), bytes.size());
    };
  }

  // The per-group fallback of an NCCL without ncclCommSplit sends each group's unique id
  // over the group's MPI communicator, which a bootstrap does not have. Every rank of one
  // build reaches it at the first kind alike.
  [[nodiscard]] KindBroadcast kind_broadcast(const std::vector<KindGroup>& /*created*/) override {
    return [](std::size_t, std::span<std::byte>) {
      throw ConfigError(
          "this NCCL has no ncclCommSplit (NCCL 2.18 or later has it), and its per-group creation needs the MPI "
          "bootstrap: build the context over an MPI communicator, or use NCCL 2.18 or later");
    };
  }

  void finish(const Layout& /*layout*/, const std::vector<KindGroup>& /*created*/, LiveGroups& /*live*/) override {}

 private:
  Bootstrap& bootstrap_;
  std::chrono::milliseconds timeout_{0};
};

}  // namespace

std::unique_ptr<Transport> bootstrap_transport(Bootstrap& bootstrap) {
  return std::make_unique<BootstrapTransport>(bootstrap);
}

}  // namespace pgroups::detail
