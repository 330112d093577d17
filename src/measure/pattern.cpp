#include "measure/pattern.hpp"

#include <cstring>

#include "core/errors.hpp"
#include "core/pattern_word.hpp"

namespace pathbench {

void fill_pattern(std::span<std::byte> buffer, std::uint64_t seed) {
  const std::size_t words = buffer.size() / 8;
  std::byte* p = buffer.data();
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t v = pattern_word(seed, w);
    std::memcpy(p + w * 8, &v, 8);
  }
  for (std::size_t i = words * 8; i < buffer.size(); ++i) {
    p[i] = static_cast<std::byte>(pattern_byte(seed, i));
  }
}

std::optional<std::size_t> find_pattern_mismatch(std::span<const std::byte> buffer,
                                                 std::uint64_t seed) {
  const std::size_t words = buffer.size() / 8;
  const std::byte* p = buffer.data();
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t v;
    std::memcpy(&v, p + w * 8, 8);
    if (v != pattern_word(seed, w)) {
      for (std::size_t i = w * 8;; ++i) {
        if (static_cast<std::uint8_t>(p[i]) != pattern_byte(seed, i)) return i;
      }
    }
  }
  for (std::size_t i = words * 8; i < buffer.size(); ++i) {
    if (static_cast<std::uint8_t>(p[i]) != pattern_byte(seed, i)) return i;
  }
  return std::nullopt;
}

void verify_pattern(std::span<const std::byte> buffer, std::uint64_t seed,
                    const std::string& what) {
  if (auto bad = find_pattern_mismatch(buffer, seed)) {
    throw CaseFailure(what + ": byte " + std::to_string(*bad) + " of " +
                      std::to_string(buffer.size()) + " differs from the pattern (expected 0x" +
                      [&] {
                        char hex[3];
                        std::snprintf(hex, sizeof hex, "%02x", pattern_byte(seed, *bad));
                        return std::string(hex);
                      }() +
                      ")");
  }
}

}  // namespace pathbench
