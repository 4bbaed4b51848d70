#pragma once
/// \file
/// pgroups::report: how plans and their communicator bill are shown (text and JSON), shared
/// by the CLI and the Python module.

#include "pgroups/config_json.hpp"
#include "pgroups/report/bill_report.hpp"
#include "pgroups/report/elided_list.hpp"
#include "pgroups/report/output_size.hpp"
#include "pgroups/report/plan_report.hpp"
