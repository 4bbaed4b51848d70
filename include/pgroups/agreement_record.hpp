#pragma once
/// \file
/// Forwarding header: this header moved to pgroups/layout/agreement_record.hpp (CHANGELOG.md); the old path
/// keeps working.

#include "pgroups/layout/agreement_record.hpp"  // IWYU pragma: export
