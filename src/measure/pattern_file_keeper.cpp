#include "measure/pattern_file_keeper.hpp"

#include <sys/stat.h>

#include <cerrno>

#include "core/errors.hpp"

namespace pathbench {

std::optional<PatternFileKeeper::FileId> PatternFileKeeper::id_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                static_cast<std::uint64_t>(st.st_size)};
}

PatternFileKeeper::Lease PatternFileKeeper::file(const std::string& dir, std::uint64_t bytes,
                                                 std::uint64_t seed) {
  if (kept_ && dir_ == dir && kept_->bytes() == bytes && kept_->seed() == seed &&
      id_of(kept_->path()) == written_) {
    return {kept_, false};
  }
  // Let the old file go before writing the new one: the disk never holds both for this keeper.
  kept_.reset();
  auto made = std::make_shared<const PatternFile>(dir, bytes, seed);
  const std::optional<FileId> id = id_of(made->path());
  if (!id) throw SystemError("stat " + made->path(), errno);
  written_ = *id;
  dir_ = dir;
  kept_ = made;
  return {std::move(made), true};
}

std::uint64_t PatternFileKeeper::bytes_kept_in(const std::string& dir) const {
  return kept_ && dir_ == dir ? kept_->bytes() : 0;
}

}  // namespace pathbench
