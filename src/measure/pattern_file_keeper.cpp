#include "measure/pattern_file_keeper.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "core/errors.hpp"

namespace pathbench {

namespace {

struct stat stat_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw SystemError("stat " + path, errno);
  return st;
}

}  // namespace

PatternFileKeeper::Lease PatternFileKeeper::file(const std::string& dir, std::uint64_t bytes,
                                                 std::uint64_t seed) {
  if (kept_ && dir_ == dir && kept_->bytes() == bytes && kept_->seed() == seed) {
    struct stat st {};
    if (::stat(kept_->path().c_str(), &st) == 0 &&
        static_cast<std::uint64_t>(st.st_dev) == device_ &&
        static_cast<std::uint64_t>(st.st_ino) == inode_ &&
        static_cast<std::uint64_t>(st.st_size) == bytes) {
      return {kept_, false};
    }
  }
  // Let the old file go before writing the new one: the disk never holds both for this keeper.
  kept_.reset();
  auto made = std::make_shared<const PatternFile>(dir, bytes, seed);
  const struct stat st = stat_of(made->path());
  device_ = static_cast<std::uint64_t>(st.st_dev);
  inode_ = static_cast<std::uint64_t>(st.st_ino);
  dir_ = dir;
  kept_ = made;
  return {std::move(made), true};
}

std::uint64_t PatternFileKeeper::bytes_kept_in(const std::string& dir) const {
  return kept_ && dir_ == dir ? kept_->bytes() : 0;
}

}  // namespace pathbench
