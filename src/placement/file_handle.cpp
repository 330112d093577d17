#include "placement/file_handle.hpp"

#include <fcntl.h>

#include <cerrno>

#include "core/errors.hpp"

namespace pathbench {

FileMapping::FileMapping(int fd, std::size_t bytes) : bytes_(bytes) {
  void* p = ::mmap(nullptr, bytes == 0 ? 1 : bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    throw SystemError("mmap of the file", errno);
  }
  ptr_ = p;
  if (bytes_ == 0) bytes_ = 1;
}

UniqueFd open_file(const std::string& path, int flags, const std::string& why) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw SystemError("open " + path + " (" + why + ")", errno);
  }
  return UniqueFd(fd);
}

}  // namespace pathbench
