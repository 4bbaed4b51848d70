#include "pgroups/launch/callback_bootstrap.hpp"

#include <fmt/format.h>

#include <utility>

#include "pgroups/common/error.hpp"

namespace pgroups {
namespace {

class CallbackBootstrap final : public Bootstrap {
 public:
  CallbackBootstrap(int rank, int size, int local_rank, int local_size, BootstrapCallbacks callbacks)
      : rank_(rank), size_(size), local_rank_(local_rank), local_size_(local_size), callbacks_(std::move(callbacks)) {}

  [[nodiscard]] BootstrapKind kind() const noexcept override { return BootstrapKind::callback; }
  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] int local_rank() const noexcept override { return local_rank_; }
  [[nodiscard]] int local_size() const noexcept override { return local_size_; }

  [[nodiscard]] std::vector<std::string> all_gather(std::string_view bytes, std::chrono::milliseconds timeout,
                                                    std::string_view what) override {
    std::vector<std::string> gathered = callbacks_.all_gather(bytes, timeout);
    if (static_cast<int>(gathered.size()) != size_) {
      throw BackendError(fmt::format("the program's all-gather returned {} entries at {}, not one per rank ({})",
                                     gathered.size(), what, size_));
    }
    return gathered;
  }

  void barrier(std::chrono::milliseconds timeout, std::string_view what) override {
    if (callbacks_.barrier) {
      callbacks_.barrier(timeout);
    } else {
      (void)all_gather({}, timeout, what);
    }
  }

 private:
  int rank_;
  int size_;
  int local_rank_;
  int local_size_;
  BootstrapCallbacks callbacks_;
};

void require_index(std::string_view name, int value, std::string_view bound_name, int bound) {
  if (value < 0 || value >= bound) {
    throw ConfigError(fmt::format("{} {} is not in [0, {}) ({} {})", name, value, bound, bound_name, bound));
  }
}

}  // namespace

std::unique_ptr<Bootstrap> make_callback_bootstrap(int rank, int size, int local_rank, int local_size,
                                                   BootstrapCallbacks callbacks) {
  require_index("rank", rank, "size", size);
  require_index("local rank", local_rank, "local size", local_size);
  if (local_size > size) {
    throw ConfigError(fmt::format("local size {} is above the world's size {}", local_size, size));
  }
  if (!callbacks.all_gather)
    throw ConfigError("a callback bootstrap needs an all-gather (BootstrapCallbacks::all_gather)");
  return std::make_unique<CallbackBootstrap>(rank, size, local_rank, local_size, std::move(callbacks));
}

}  // namespace pgroups
