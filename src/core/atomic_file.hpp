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
// target that exists and is not a regular file, DiskFull when the file system is full,
// SystemError when the OS refuses otherwise.
//
// The temporary file is `.<name>.tmp-<host>-<pid>.XXXXXX`: removed on every error, by a second
// stop signal (stop_signals.hpp), and — when a process was killed mid-write (kill -9) — by the
// next write of the same output on the same host, once that process is gone.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// The checks write_file_atomically makes before it writes anything, for a writer that must know
// early (a run, before it measures; a journal beside the output): returns the file a write would
// replace (links followed). NotARegularFile when the target exists and is not a regular file, or
// cannot be reached (a symbolic link loop, a folder on the way that is a loop or a file).
std::filesystem::path check_output_target(const std::filesystem::path& path);

// write_file_atomically for a command's output file: a refusal or OS error becomes an InputError
// naming the file ("cannot write <what>: ..."), while DiskFull passes through (exit 2).
void write_output_file(const std::filesystem::path& path, std::string_view content,
                       std::string_view what);

// The leftovers of writes to `path` by processes of this host that no longer exist; returns how
// many were removed. write_file_atomically calls it; a run calls it for its own side files too.
std::size_t remove_stale_temporary_files(const std::filesystem::path& path);

// Async-signal-safe: unlinks the temporary file of the write in progress, if any.
void remove_pending_temporary_file() noexcept;

// The whole file. Refuses (NotARegularFile) what is not a regular file — a FIFO would block, a
// device never end — and (std::length_error) a file larger than `max_bytes`, before reading.
std::string read_text_file(const std::filesystem::path& path,
                           std::uint64_t max_bytes = std::uint64_t{1} << 40);

// An open read-only descriptor of `path` after read_text_file's checks (the same exceptions), for
// a reader that streams the file in chunks instead of holding it whole; the caller closes it.
int open_regular_file(const std::filesystem::path& path,
                      std::uint64_t max_bytes = std::uint64_t{1} << 40);

}  // namespace pathbench
