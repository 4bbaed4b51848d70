#pragma once
/// \file
/// Umbrella of the rules below every layer (target pgroups::common): the errors pgroups
/// throws and their exit codes, how user text is quoted in messages, how integer text is
/// read, how the environment is read, and the digest ranks compare.

#include "pgroups/common/decimal_integer.hpp"  // IWYU pragma: export
#include "pgroups/common/digest.hpp"  // IWYU pragma: export
#include "pgroups/common/environment.hpp"  // IWYU pragma: export
#include "pgroups/common/error.hpp"  // IWYU pragma: export
#include "pgroups/common/printable.hpp"  // IWYU pragma: export
