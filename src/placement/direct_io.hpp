#pragma once

// O_DIRECT's rules, as arithmetic a test can check: a read's file offset, length and buffer
// address must be multiples of the logical block size (4096 covers every block device in use),
// and a file whose size is no multiple of it is read to its end by a rounded-up last read that
// the kernel cuts short at end of file.

#include <cstdint>

namespace pathbench {

inline constexpr std::uint64_t kDirectIoAlignment = 4096;

constexpr std::uint64_t round_up_to(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
constexpr bool is_aligned_to(std::uint64_t value, std::uint64_t alignment) {
  return value % alignment == 0;
}
inline bool is_aligned_address(const void* p, std::uint64_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

// Piece `index` of a file of `file_bytes` read `chunk` bytes at a time.
struct FileChunk {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;        // what the piece holds (the last one may be shorter)
  std::uint64_t read_length = 0;  // what an O_DIRECT read asks for: `bytes` rounded up
};

constexpr std::uint64_t chunk_count(std::uint64_t file_bytes, std::uint64_t chunk) {
  return chunk == 0 ? 0 : (file_bytes + chunk - 1) / chunk;
}

constexpr FileChunk file_chunk(std::uint64_t index, std::uint64_t file_bytes, std::uint64_t chunk) {
  const std::uint64_t offset = index * chunk;
  const std::uint64_t left = offset < file_bytes ? file_bytes - offset : 0;
  const std::uint64_t bytes = left < chunk ? left : chunk;
  return {offset, bytes, round_up_to(bytes, kDirectIoAlignment)};
}

}  // namespace pathbench
