#include "verify_record.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "pgroups/common/error.hpp"

namespace pgroups::cli {

// Compact arrays, not objects: a record travels to every rank, W times over.
std::string RankRecord::encode() const {
  nlohmann::json seen = nlohmann::json::array();
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    seen.push_back({kinds[k].rank, kinds[k].size, kinds[k].ok, kinds[k].members, kind_seconds[k]});
  }
  nlohmann::json checks = nlohmann::json::array();
  for (const DeviceRecord& check : device) {
    checks.push_back({check.member, check.expected, check.actual, check.create_seconds});
  }
  return nlohmann::json{create_seconds,      node.key,         node.host, node.local_rank,
                        launcher_local_rank, topology_address, seen,      checks}
      .dump();
}

RankRecord RankRecord::decode(std::string_view bytes, int rank) {
  try {
    const nlohmann::json all = nlohmann::json::parse(bytes);
    RankRecord record;
    record.create_seconds = all.at(0).get<double>();
    record.node = {all.at(1).get<std::string>(), all.at(2).get<std::string>(), all.at(3).get<int>()};
    record.launcher_local_rank = all.at(4).get<std::int64_t>();
    record.topology_address = all.at(5).get<std::string>();
    for (const nlohmann::json& kind : all.at(6)) {
      record.kinds.push_back({.rank = kind.at(0).get<int>(),
                              .size = kind.at(1).get<int>(),
                              .members = kind.at(3).get<std::vector<int>>(),
                              .ok = kind.at(2).get<bool>()});
      record.kind_seconds.push_back(kind.at(4).get<double>());
    }
    for (const nlohmann::json& check : all.at(7)) {
      record.device.push_back({check.at(0).get<bool>(), check.at(1).get<std::int64_t>(),
                               check.at(2).get<std::int64_t>(), check.at(3).get<double>()});
    }
    return record;
  } catch (const nlohmann::json::exception& error) {
    throw BackendError(
        fmt::format("rank {} sent no verify record ({}): it does not run this program's protocol", rank, error.what()));
  }
}

}  // namespace pgroups::cli
