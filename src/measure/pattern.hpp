#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace pathbench {

// A position-dependent byte pattern: a copy that dropped, duplicated or shifted any part of the
// data fails verification, and a buffer cleared before the copy cannot pass by accident.
//
// `offset`: the buffer holds the pattern's bytes from that position on, so pieces scattered over
// host memory can together hold one pattern that a contiguous destination is checked against.
void fill_pattern(std::span<std::byte> buffer, std::uint64_t seed, std::uint64_t offset = 0);

// Index within `buffer` of the first byte that differs from the pattern, else nothing.
std::optional<std::size_t> find_pattern_mismatch(std::span<const std::byte> buffer,
                                                 std::uint64_t seed, std::uint64_t offset = 0);

// Throws CaseFailure describing the first mismatch ("<what>: byte 4096 of 268435456 differs").
void verify_pattern(std::span<const std::byte> buffer, std::uint64_t seed, const std::string& what,
                    std::uint64_t offset = 0);

// `count` pieces of `bytes` each, one every `pitch` bytes (pitch >= bytes) from `base`, that
// together hold one pattern of count * bytes: what a gather of the pieces reads, and what a
// scatter into them must leave, with every byte between the pieces untouched.
struct PatternPieces {
  std::byte* base = nullptr;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t pitch = 0;
};

// Each piece holds its part of the pattern; the gaps between the pieces are zero.
void fill_pattern_pieces(const PatternPieces& pieces, std::uint64_t seed);

// Throws CaseFailure naming the first piece that differs from its part of the pattern, or whose
// gap is no longer zero (an operation that overran its piece).
void verify_pattern_pieces(const PatternPieces& pieces, std::uint64_t seed,
                           const std::string& what);

}  // namespace pathbench
