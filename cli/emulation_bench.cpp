#include "emulation_bench.hpp"

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "output.hpp"
#include "pgroups/common/decimal_integer.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/cost/bootstrap_cost.hpp"
#include "pgroups/emulation.hpp"
#include "pgroups/layout/layout.hpp"

namespace pgroups::cli {
namespace {

// Descriptors this process keeps for itself beside the store clients.
constexpr std::int64_t kSpareDescriptors = 64;

// The fewest ranks per client (powers of two: a node's ranks) whose clients fit in this
// process's descriptors.
std::int64_t ranks_per_client_for(std::int64_t ranks, std::optional<std::int64_t> asked) {
  if (asked) return *asked;
  const std::int64_t limit = raise_open_file_limit();
  std::int64_t per = 1;
  while ((ranks + per - 1) / per + kSpareDescriptors > limit && per < ranks) per *= 2;
  return per;
}

std::string emulation_text(const EmulationResult& result, const std::string& what, const std::string& store,
                           const Layout& layout, std::optional<double> extrapolated, const BootstrapCost& model) {
  const double per = static_cast<double>(result.ranks_per_client);
  std::string text =
      fmt::format("store emulation: {} ranks ({}), {}, against {}\n", result.ranks, layout.summary(), what, store);
  text += fmt::format("{} connections, {} ranks per connection{}\n", result.connections, result.ranks_per_client,
                      result.ranks_per_client > 1 ? " (a node relay)" : "");
  text += fmt::format("{:<28}{:.3f} (the model: {:.3g})\n", "seconds", result.seconds,
                      extrapolated ? model.new_group_loop_seconds : model.store_seconds);
  if (extrapolated) {
    text += fmt::format("{:<28}{:.1f} ({} of {} groups emulated)\n", "seconds, every group", *extrapolated,
                        result.groups_emulated, result.groups);
  }
  text += fmt::format("{:<28}max {}, median {:.0f}\n", "round trips per rank", result.most_round_trips,
                      result.median_round_trips);
  text += fmt::format("{:<28}max {:.0f}, median {:.0f}\n", "bytes read per rank",
                      static_cast<double>(result.most_bytes_read) / per, result.median_bytes_read / per);
  text += fmt::format("{:<28}{}\n", "requests", result.requests);
  text += fmt::format("{:<28}{}\n", "bytes through the store", result.bytes_sent + result.bytes_read);
  return text;
}

nlohmann::json emulation_json(const EmulationResult& result, const std::string& traffic, const std::string& store,
                              std::optional<double> extrapolated, const BootstrapCost& model) {
  const double per = static_cast<double>(result.ranks_per_client);
  nlohmann::json report = {
      {"emulated_ranks", result.ranks},
      {"traffic", traffic},
      {"store", store},
      {"connections", result.connections},
      {"ranks_per_connection", result.ranks_per_client},
      {"seconds", result.seconds},
      {"round_trips_per_rank", result.most_round_trips},
      {"median_round_trips_per_rank", result.median_round_trips},
      {"bytes_per_rank",
       {{"max", static_cast<double>(result.most_bytes_read) / per}, {"median", result.median_bytes_read / per}}},
      {"requests", result.requests},
      {"bytes_through_store", result.bytes_sent + result.bytes_read},
      // The cost model's seconds for the same clients (pgroups/cost/bootstrap_cost.hpp).
      {"model_seconds", extrapolated ? model.new_group_loop_seconds : model.store_seconds}};
  if (extrapolated) {
    report["groups_emulated"] = result.groups_emulated;
    report["groups"] = result.groups;
    report["extrapolated_seconds"] = *extrapolated;
  }
  return report;
}

}  // namespace

int run_emulation_bench(const EmulationBenchOptions& options, const PlanOptions& plan, const std::string& backend,
                        const std::string& format) {
  const auto at_least_one = [](std::optional<std::int64_t> value, std::string_view option) {
    if (value && *value < 1) throw ConfigError(fmt::format("{} {} is invalid: it must be at least 1", option, *value));
  };
  at_least_one(options.ranks, "--emulate");
  at_least_one(options.ranks_per_client, "--relay");
  at_least_one(options.loop_groups, "--loop-groups");
  if (options.loop_groups && !options.new_group_loop) {
    throw ConfigError("--loop-groups is invalid without --loop: it bounds the emulated new_group loop");
  }
  if (backend != "gloo" && backend != "nccl") {
    throw ConfigError(fmt::format(
        "--backend {} is invalid with --emulate: the emulation plays the bootstrap's traffic, gloo's or nccl's",
        backend));
  }
  ParallelConfig config = plan.resolve(*options.ranks);
  validate(config);
  const Layout layout(config);
  EmulationOptions emulation;
  emulation.traffic = options.new_group_loop ? EmulatedTraffic::new_group_loop
                      : backend == "nccl"    ? EmulatedTraffic::nccl
                                             : EmulatedTraffic::gloo;
  emulation.ranks_per_client = ranks_per_client_for(layout.world_size(), options.ranks_per_client);
  emulation.loop_groups = options.loop_groups.value_or(0);
  std::unique_ptr<StoreServerProcess> server;
  std::string store = options.store;
  if (store.empty()) {
    server = std::make_unique<StoreServerProcess>();
    emulation.port = server->port();
    store = fmt::format("pgroups' store server (127.0.0.1:{})", emulation.port);
  } else {
    const std::size_t colon = store.rfind(':');
    const IntegerReading port = read_decimal_integer(
        colon == std::string::npos ? std::string_view{} : std::string_view(store).substr(colon + 1));
    if (port.status != IntegerStatus::ok || port.value < 1 || port.value > 65535) {
      throw ConfigError(
          fmt::format("--store '{}' is invalid: HOST:PORT with an IPv4 host and a port in 1-65535", store));
    }
    emulation.host = store.substr(0, colon);
    emulation.port = static_cast<std::uint16_t>(port.value);
  }
  const EmulationResult result = emulate_store_traffic(layout, emulation);
  std::optional<double> extrapolated;
  const std::string traffic = options.new_group_loop ? "new_group_loop" : backend;
  if (options.new_group_loop) {
    extrapolated = result.seconds * static_cast<double>(result.groups) / static_cast<double>(result.groups_emulated);
  }
  const std::string what = options.new_group_loop
                               ? std::string("torch's new_group loop (every rank, every group's store-based barrier)")
                               : fmt::format("pgroups' creation on the env bootstrap, {} traffic", backend);
  const BootstrapCost model = env_bootstrap_cost(layout, emulation.ranks_per_client);
  write_output(format == "json" ? emulation_json(result, traffic, store, extrapolated, model).dump() + '\n'
                                : emulation_text(result, what, store, layout, extrapolated, model));
  return 0;
}

}  // namespace pgroups::cli
