// The PMIx bootstrap (pgroups/launch/pmix_bootstrap.hpp). Without PMIx (no libpmix-dev
// at configure time) only the refusal is built.

#include "pgroups/launch/pmix_bootstrap.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/launch/timeout.hpp"

#ifdef PGROUPS_LAUNCH_WITH_PMIX
#include <pmix.h>

#include <cstdint>
#include <cstring>
#include <limits>
#endif

namespace pgroups {

bool pmix_server_present(const EnvironmentLookup& lookup) {
  return environment_text(lookup, "PMIX_NAMESPACE").has_value() && environment_text(lookup, "PMIX_RANK").has_value();
}

#ifndef PGROUPS_LAUNCH_WITH_PMIX

std::unique_ptr<Bootstrap> make_pmix_bootstrap(const EnvironmentLookup& /*lookup*/) {
  throw ConfigError(
      "bootstrap pmix is not built into this pgroups: install libpmix-dev (Debian) and configure again, or use "
      "another bootstrap");
}

#else

namespace {

[[noreturn]] void fail(pmix_status_t status, std::string_view call) {
  throw BackendError(fmt::format("{} failed: {} (PMIx status {})", call, PMIx_Error_string(status), status));
}

// One value of the job or of a process, as an unsigned integer of any PMIx width.
std::uint64_t get_number(const pmix_proc_t& proc, const char* key) {
  pmix_value_t* value = nullptr;
  const pmix_status_t status = PMIx_Get(&proc, key, nullptr, 0, &value);
  if (status != PMIX_SUCCESS) fail(status, fmt::format("PMIx_Get({})", key));
  std::uint64_t number = 0;
  switch (value->type) {
    case PMIX_UINT16: number = value->data.uint16; break;
    case PMIX_UINT32: number = value->data.uint32; break;
    case PMIX_UINT64: number = value->data.uint64; break;
    case PMIX_INT: number = static_cast<std::uint64_t>(value->data.integer); break;
    default: {
      const auto type = value->type;
      PMIX_VALUE_RELEASE(value);
      throw BackendError(fmt::format("PMIx_Get({}) gave a value of PMIx type {}, not an integer", key, type));
    }
  }
  PMIX_VALUE_RELEASE(value);
  return number;
}

class PmixBootstrap final : public Bootstrap {
 public:
  PmixBootstrap() {
    const pmix_status_t status = PMIx_Init(&self_, nullptr, 0);
    if (status != PMIX_SUCCESS) fail(status, "PMIx_Init");
    try {
      PMIX_LOAD_PROCID(&job_, self_.nspace, PMIX_RANK_WILDCARD);
      size_ = checked_int(get_number(job_, PMIX_JOB_SIZE), PMIX_JOB_SIZE);
      local_rank_ = checked_int(get_number(self_, PMIX_LOCAL_RANK), PMIX_LOCAL_RANK);
      local_size_ = checked_int(get_number(job_, PMIX_LOCAL_SIZE), PMIX_LOCAL_SIZE);
    } catch (...) {
      PMIx_Finalize(nullptr, 0);
      throw;
    }
  }
  ~PmixBootstrap() override { PMIx_Finalize(nullptr, 0); }

  [[nodiscard]] BootstrapKind kind() const noexcept override { return BootstrapKind::pmix; }
  [[nodiscard]] int rank() const noexcept override { return static_cast<int>(self_.rank); }
  [[nodiscard]] int size() const noexcept override { return size_; }
  [[nodiscard]] int local_rank() const noexcept override { return local_rank_; }
  [[nodiscard]] int local_size() const noexcept override { return local_size_; }

  std::vector<std::string> all_gather(std::string_view bytes, std::chrono::milliseconds timeout,
                                      std::string_view what) override {
    // A key per all-gather: PMIx keeps every value put, and a later one must not read an
    // earlier one's.
    const std::string key = fmt::format("pgroups.gather.{}", gathers_++);
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    std::string copy(bytes);
    value.data.bo.bytes = copy.data();
    value.data.bo.size = copy.size();
    if (const pmix_status_t status = PMIx_Put(PMIX_GLOBAL, key.c_str(), &value); status != PMIX_SUCCESS) {
      fail(status, "PMIx_Put");
    }
    if (const pmix_status_t status = PMIx_Commit(); status != PMIX_SUCCESS) fail(status, "PMIx_Commit");
    fence(true, timeout, what);
    std::vector<std::string> gathered;
    gathered.reserve(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      pmix_proc_t proc;
      PMIX_LOAD_PROCID(&proc, self_.nspace, static_cast<pmix_rank_t>(r));
      pmix_value_t* got = nullptr;
      const pmix_status_t status = PMIx_Get(&proc, key.c_str(), nullptr, 0, &got);
      if (status != PMIX_SUCCESS) fail(status, fmt::format("PMIx_Get({}) of rank {}", key, r));
      if (got->type != PMIX_BYTE_OBJECT) {
        PMIX_VALUE_RELEASE(got);
        throw BackendError(fmt::format("PMIx_Get({}) of rank {} gave no bytes", key, r));
      }
      gathered.emplace_back(got->data.bo.bytes, got->data.bo.size);
      PMIX_VALUE_RELEASE(got);
    }
    return gathered;
  }

  void barrier(std::chrono::milliseconds timeout, std::string_view what) override { fence(false, timeout, what); }

 private:
  static int checked_int(std::uint64_t number, const char* key) {
    if (number > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      throw BackendError(fmt::format("PMIx's {} is {}, more than pgroups' ranks (int) hold", key, number));
    }
    return static_cast<int>(number);
  }

  // PMIx_Fence over the whole job; PMIX_TIMEOUT is in whole seconds, rounded up.
  void fence(bool collect, std::chrono::milliseconds timeout, std::string_view what) {
    pmix_info_t info[2];
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    bool collect_data = collect;
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect_data, PMIX_BOOL);
    std::size_t count = 1;
    if (is_limited(timeout)) {
      const auto seconds = std::chrono::ceil<std::chrono::seconds>(timeout).count();
      int limit =
          seconds > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max() : static_cast<int>(seconds);
      PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &limit, PMIX_INT);
      count = 2;
    }
    const pmix_status_t status = PMIx_Fence(&job_, 1, info, count);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (status == PMIX_ERR_TIMEOUT) {
      throw TimeoutError(timeout_message(timeout, what, "", rank(), size_) + " (PMIx's fence)");
    }
    if (status != PMIX_SUCCESS) fail(status, "PMIx_Fence");
  }

  pmix_proc_t self_{};
  pmix_proc_t job_{};
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::uint64_t gathers_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_pmix_bootstrap(const EnvironmentLookup& lookup) {
  if (!pmix_server_present(lookup)) {
    throw ConfigError(
        "--bootstrap pmix needs a launcher with a PMIx server (srun --mpi=pmix, Open MPI's mpirun): this process "
        "has no PMIX_NAMESPACE or PMIX_RANK in its environment");
  }
  return std::make_unique<PmixBootstrap>();
}

#endif

}  // namespace pgroups
