#pragma once

// A read-only mapping of a file and open(2) that names what failed (the storage family, its
// page-cache probes and its pattern file). Destructors never throw.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <string>
#include <utility>

#include "core/unique_fd.hpp"

namespace pathbench {

// mmap(PROT_READ, MAP_SHARED) of a whole file; throws SystemError when mmap fails.
class FileMapping {
 public:
  FileMapping() = default;
  FileMapping(int fd, std::size_t bytes);
  FileMapping(FileMapping&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  FileMapping& operator=(FileMapping&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~FileMapping() {
    if (ptr_) ::munmap(ptr_, bytes_);
  }
  const std::byte* data() const { return static_cast<const std::byte*>(ptr_); }
  std::size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// open(2) that throws SystemError naming `path` (and what it was opened for) on failure.
UniqueFd open_file(const std::string& path, int flags, const std::string& why);

}  // namespace pathbench
