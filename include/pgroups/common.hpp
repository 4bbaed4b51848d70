#pragma once
/// \file
/// Umbrella of the rules below every layer (target pgroups::common): how user text is
/// quoted in messages, and how integer text is read.

#include "pgroups/common/decimal_integer.hpp"  // IWYU pragma: export
#include "pgroups/common/printable.hpp"  // IWYU pragma: export
