#pragma once
/// \file
/// The one digest of bytes that ranks compare instead of the bytes: 64-bit FNV-1a, the
/// same on every build (no seed, no std::hash), so that a C++ rank and a Python rank, or
/// two builds of pgroups, agree on it. Not a cryptographic hash: it tells equal texts
/// from different ones, and the ranks read the texts themselves when digests differ.

#include <cstdint>
#include <string_view>

namespace pgroups {

/// 64-bit FNV-1a of `bytes`. O(size).
[[nodiscard]] std::uint64_t text_digest(std::string_view bytes) noexcept;

}  // namespace pgroups
