#pragma once

// The storage cases of one run read one test file, written once and kept for the cases after the
// one that wrote it, as fio reads one file at every setting:
// - every case reads the same extents of the disk, so two cases (pinned against hugetlb slots,
//   threads against AIO) differ by what they do, not by where their files happened to land;
// - a run of many cases does not write a file per case (scenarios/storage.json's 44 cases wrote
//   39 GiB to the drive being measured, a fleet's model-store NVMe among them; now about 5), and
//   no read starts right behind a large write whose write-back may still be going on below the
//   file system (a VM's host cache).
// One file is kept at a time: a case of another size (or seed, or folder) removes it and writes
// its own, so the disk holds no more than it did with a file per case.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "measure/pattern_file.hpp"

namespace pathbench {

class PatternFileKeeper {
 public:
  PatternFileKeeper() = default;
  PatternFileKeeper(const PatternFileKeeper&) = delete;
  PatternFileKeeper& operator=(const PatternFileKeeper&) = delete;
  ~PatternFileKeeper() = default;  // the kept file goes with the last case that holds it

  struct Lease {
    std::shared_ptr<const PatternFile> file;
    bool written_now = false;  // false: written for an earlier case and kept
  };

  // The kept file when it was written in `dir` with `bytes` of the pattern of `seed` and is still
  // there at that size; else the kept one is let go (removed once no case holds it) and a new one
  // written and kept. A file that was removed or truncated behind pathbench's back is written
  // again, never read short.
  Lease file(const std::string& dir, std::uint64_t bytes, std::uint64_t seed);

  // What the kept file takes in `dir`: space a case there gets back, by reading the file or by
  // replacing it (its free-space check counts it as free). 0 with no kept file in `dir`.
  std::uint64_t bytes_kept_in(const std::string& dir) const;

  // Lets the kept file go (removed once no case holds it): before the process is replaced, and
  // when the run ends.
  void release() { kept_.reset(); }

 private:
  std::shared_ptr<const PatternFile> kept_;
  std::string dir_;  // as asked for: the run's storage folder, the same string for every case
  // What the kept file was when written: one removed, truncated or put in its place (another
  // inode) is not taken for it.
  struct FileId {
    std::uint64_t device = 0, inode = 0, bytes = 0;
    bool operator==(const FileId&) const = default;
  };
  static std::optional<FileId> id_of(const std::string& path);  // nothing when stat fails
  FileId written_;
};

}  // namespace pathbench
