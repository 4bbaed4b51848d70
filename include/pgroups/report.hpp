#pragma once
/// \file
/// Umbrella of the report layer (target pgroups::report): plans, explanations and bills
/// as text and JSON, the one rendering the CLI and the Python package print.

#include "pgroups/report/bill_report.hpp"  // IWYU pragma: export
#include "pgroups/report/elided_list.hpp"  // IWYU pragma: export
#include "pgroups/report/locality_report.hpp"  // IWYU pragma: export
#include "pgroups/report/output_size.hpp"  // IWYU pragma: export
#include "pgroups/report/placement_report.hpp"  // IWYU pragma: export
#include "pgroups/report/plan_report.hpp"  // IWYU pragma: export
#include "pgroups/report/recovery_report.hpp"  // IWYU pragma: export
#include "pgroups/report/switch_locality.hpp"  // IWYU pragma: export
#include "pgroups/report/verify_report.hpp"  // IWYU pragma: export
