#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace pathbench {

// FIPS 180-4 SHA-256, for scenario-file digests and the topology fingerprint.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  // Finalises the message and resets the object, so it can hash a new message.
  std::array<std::uint8_t, 32> digest();
  std::string hex_digest();  // lower-case hex of digest()

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace pathbench
