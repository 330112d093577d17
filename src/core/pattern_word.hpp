#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define PB_HOST_DEVICE __host__ __device__
#else
#define PB_HOST_DEVICE
#endif

namespace pathbench {

// Word `index` of the verification pattern (splitmix64 of seed and position). Shared by the host
// fill/check and the device fill/check kernels, which must agree bit for bit.
PB_HOST_DEVICE inline std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Byte `i` of the pattern, little-endian within each word.
PB_HOST_DEVICE inline std::uint8_t pattern_byte(std::uint64_t seed, std::uint64_t i) {
  return static_cast<std::uint8_t>(pattern_word(seed, i / 8) >> (8 * (i % 8)));
}

}  // namespace pathbench
