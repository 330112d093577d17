#pragma once

// A file that pathbench writes for a read to be checked against: the verification pattern
// (measure/pattern.hpp, position-dependent, so a misplaced or swapped chunk is caught, not just
// a wrong byte) from offset 0 to its end, fsync'd before anyone reads it. The file is pathbench's
// own: created under a given folder with a unique name and removed when its owner goes.

#include <cstdint>
#include <span>
#include <string>

namespace pathbench {

class PatternFile {
 public:
  // Creates `dir` (and its parents) if missing, then the file (mkstemp, mode 0600), writes
  // `bytes` of the pattern of `seed` and fsyncs it. Throws CaseFailure when the disk fills up,
  // SystemError when a call fails otherwise; nothing is left behind either way.
  PatternFile(const std::string& dir, std::uint64_t bytes, std::uint64_t seed);
  PatternFile(const PatternFile&) = delete;
  PatternFile& operator=(const PatternFile&) = delete;
  ~PatternFile();  // unlinks the file

  const std::string& path() const { return path_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t seed() const { return seed_; }

 private:
  std::string path_;
  std::uint64_t bytes_ = 0, seed_ = 0;
};

// Writes `bytes` of the pattern to `fd` from offset 0 (in pieces, through a bounded buffer) and
// fsyncs. Throws CaseFailure on ENOSPC/EDQUOT (a test file, not an output: the case fails, the
// run goes on), SystemError otherwise.
void write_pattern_file(int fd, std::uint64_t bytes, std::uint64_t seed);

// Checks that `image` is the whole of a pattern file of `file_bytes` (what a read of it put into
// a buffer): throws CaseFailure naming `what` and the first byte that differs, or a size that
// does not match.
void verify_file_image(std::span<const std::byte> image, std::uint64_t file_bytes,
                       std::uint64_t seed, const std::string& what);

// Reads the file at `path` back (buffered) and checks it holds `bytes` of the pattern, no more.
void verify_pattern_file(const std::string& path, std::uint64_t bytes, std::uint64_t seed);

}  // namespace pathbench
