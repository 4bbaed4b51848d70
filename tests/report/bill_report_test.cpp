// The communicator bill of pgroups/report/bill_report.hpp, in process.

#include "pgroups/report/bill_report.hpp"

#include <gtest/gtest.h>

namespace pgroups {
namespace {

TEST(BillReport, NcclBackendAddsTheEstimateLabelledAsOne) {
  ParallelConfig config;
  config.world_size = 8;
  config.pipeline = 2;
  config.tensor_size = 2;
  const Layout layout(config);
  nlohmann::json json = nlohmann::json::object();
  report::add_bill_json(json, layout, report::BillOptions{"nccl", false});
  EXPECT_TRUE(json.contains("estimated_nccl_mib"));
  EXPECT_EQ(json.at("estimated_nccl").at("estimate"), true);
  EXPECT_EQ(json.at("communicators").at("nccl_created"), json.at("communicators").at("created"));
  nlohmann::json mpi = nlohmann::json::object();
  report::add_bill_json(mpi, layout, report::BillOptions{});
  EXPECT_FALSE(mpi.contains("estimated_nccl_mib"));
}

}  // namespace
}  // namespace pgroups
