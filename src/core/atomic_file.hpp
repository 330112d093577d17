#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string_view>

namespace pathbench {

// An output path that exists and is not a regular file (a device, FIFO, socket or directory):
// renaming over it would destroy it (`-o /dev/null` as root), so it is refused.
class NotARegularFile : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `content` to a temporary file beside `path`, flushes it and renames it into place, so a
// reader never sees a half-written result, even when the process dies mid-write. A symbolic link
// is followed: the link stays and its final target is replaced. Throws NotARegularFile for a
// target that exists and is not a regular file, SystemError when the OS refuses.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// The whole file. Refuses (NotARegularFile) what is not a regular file — a FIFO would block, a
// device never end — and (std::length_error) a file larger than `max_bytes`, before reading.
std::string read_text_file(const std::filesystem::path& path,
                           std::uint64_t max_bytes = std::uint64_t{1} << 40);

}  // namespace pathbench
