#include "measure/pattern.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/errors.hpp"
#include "core/pattern_word.hpp"

namespace pathbench {

namespace {

// Bytes before the pattern's next word boundary: handled one at a time, so the bulk of the
// buffer goes word by word even when it starts mid-word.
std::size_t head_bytes(std::size_t size, std::uint64_t offset) {
  const std::size_t to_boundary = (8 - offset % 8) % 8;
  return to_boundary < size ? to_boundary : size;
}

}  // namespace

void fill_pattern(std::span<std::byte> buffer, std::uint64_t seed, std::uint64_t offset) {
  std::byte* p = buffer.data();
  std::size_t i = head_bytes(buffer.size(), offset);
  for (std::size_t k = 0; k < i; ++k) p[k] = static_cast<std::byte>(pattern_byte(seed, offset + k));
  for (; i + 8 <= buffer.size(); i += 8) {
    const std::uint64_t v = pattern_word(seed, (offset + i) / 8);
    std::memcpy(p + i, &v, 8);
  }
  for (; i < buffer.size(); ++i) p[i] = static_cast<std::byte>(pattern_byte(seed, offset + i));
}

std::optional<std::size_t> find_pattern_mismatch(std::span<const std::byte> buffer,
                                                 std::uint64_t seed, std::uint64_t offset) {
  const std::byte* p = buffer.data();
  auto differs = [&](std::size_t k) {
    return static_cast<std::uint8_t>(p[k]) != pattern_byte(seed, offset + k);
  };
  std::size_t i = head_bytes(buffer.size(), offset);
  for (std::size_t k = 0; k < i; ++k) {
    if (differs(k)) return k;
  }
  for (; i + 8 <= buffer.size(); i += 8) {
    std::uint64_t v;
    std::memcpy(&v, p + i, 8);
    if (v != pattern_word(seed, (offset + i) / 8)) {
      for (std::size_t k = i;; ++k) {
        if (differs(k)) return k;
      }
    }
  }
  for (; i < buffer.size(); ++i) {
    if (differs(i)) return i;
  }
  return std::nullopt;
}

void verify_pattern(std::span<const std::byte> buffer, std::uint64_t seed, const std::string& what,
                    std::uint64_t offset) {
  if (auto bad = find_pattern_mismatch(buffer, seed, offset)) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", pattern_byte(seed, offset + *bad));
    throw CaseFailure(what + ": byte " + std::to_string(*bad) + " of " +
                      std::to_string(buffer.size()) + " differs from the pattern (expected 0x" +
                      hex + ")");
  }
}

void fill_pattern_pieces(const PatternPieces& pieces, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < pieces.count; ++i) {
    std::byte* piece = pieces.base + i * pieces.pitch;
    fill_pattern({piece, pieces.bytes}, seed, i * pieces.bytes);
    std::memset(piece + pieces.bytes, 0, pieces.pitch - pieces.bytes);
  }
}

void verify_pattern_pieces(const PatternPieces& pieces, std::uint64_t seed,
                           const std::string& what) {
  for (std::uint64_t i = 0; i < pieces.count; ++i) {
    auto fail = [&](const std::string& why) {
      throw CaseFailure(what + ": piece " + std::to_string(i) + " of " +
                        std::to_string(pieces.count) + ": " + why);
    };
    const std::byte* piece = pieces.base + i * pieces.pitch;
    if (const auto bad = find_pattern_mismatch({piece, pieces.bytes}, seed, i * pieces.bytes)) {
      fail("byte " + std::to_string(*bad) + " of " + std::to_string(pieces.bytes) +
           " differs from the pattern");
    }
    const std::byte* gap = piece + pieces.bytes;
    const std::byte* end = piece + pieces.pitch;
    const auto* written = std::find_if(gap, end, [](std::byte b) { return b != std::byte{0}; });
    if (written != end) {
      fail("byte " + std::to_string(written - gap) +
           " of the gap after it was written (an operation overran its piece)");
    }
  }
}

}  // namespace pathbench
