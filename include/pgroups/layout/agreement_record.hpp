#pragma once
/// \file
/// What ranks compare before they build groups, encoded so that no two different
/// configurations read the same: a list of named fields, each name and value written with
/// its length in front ("<length>:<bytes>"), compared by a 64-bit digest. Naive text
/// ("a=1 b=2") confuses a value holding a space with two fields; this encoding cannot.
/// A record may instead carry an error that a rank hit before the agreement (a type error,
/// an invalid value, its own rank check), so that every rank raises it rather than one
/// raising while the others wait. Pure: the MPI collectives are in pgroups/mpi/agreement.hpp,
/// torch's are in pgroups.torch; every layer uses these functions.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pgroups/common/error.hpp"

namespace pgroups {

/// One setting that decides collectives: a name and its value as text.
using SettingField = std::pair<std::string, std::string>;

/// The injective encoding of `fields`, in order: "<n>:<name><m>:<value>" per field. O(size).
[[nodiscard]] std::string encode_settings(std::span<const SettingField> fields);

/// The record of an error a rank hit before the agreement: `kind` is its class name
/// (ConfigError, TypeError, ...), `message` its message. Never equal to a settings
/// encoding. O(size).
[[nodiscard]] std::string encode_error(std::string_view kind, std::string_view message);

/// Whether `record` is an encode_error record.
[[nodiscard]] bool is_error_record(std::string_view record) noexcept;

/// 64-bit FNV-1a digest of a record (what the ranks reduce). O(size).
[[nodiscard]] std::uint64_t settings_digest(std::string_view record) noexcept;

/// A record as messages show it: the value of a field named "text" when there is one,
/// otherwise "name=value" joined by spaces; text that is no record is shown as it is.
[[nodiscard]] std::string record_text(std::string_view record);

/// Judges every rank's record (index = rank), as each rank does after gathering them:
/// returns when none is an error record and all are equal. Otherwise throws, the same on
/// every rank: when some rank carries an error, the error of the lowest such rank, of its
/// own class (pgroups' classes by name, else CarriedError), with the message "rank 3 hit
/// before the <what> agreement: <message>" (every variant, "; "-separated); otherwise
/// MismatchError "<what> mismatch across N ranks: ranks 0-2 hold '...'; rank 3 holds '...'".
void judge_records(std::span<const std::string> records, std::string_view what);

}  // namespace pgroups
