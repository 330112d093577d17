#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace pathbench {

// A position-dependent byte pattern: a copy that dropped, duplicated or shifted any part of the
// data fails verification, and a buffer cleared before the copy cannot pass by accident.
void fill_pattern(std::span<std::byte> buffer, std::uint64_t seed);

// Index of the first byte that differs from the pattern, else nothing.
std::optional<std::size_t> find_pattern_mismatch(std::span<const std::byte> buffer,
                                                 std::uint64_t seed);

// Throws CaseFailure describing the first mismatch ("<what>: byte 4096 of 268435456 differs").
void verify_pattern(std::span<const std::byte> buffer, std::uint64_t seed, const std::string& what);

}  // namespace pathbench
