#include "placement/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "placement/file_handle.hpp"

namespace pathbench {

double resident_fraction(int fd, std::uint64_t bytes) {
  if (bytes == 0) return 1.0;
  const FileMapping mapping(fd, bytes);
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t pages = (bytes + page - 1) / page;
  std::vector<unsigned char> resident(pages);
  // The mapping is never touched: mincore reports the page cache without faulting pages in.
  if (::mincore(const_cast<std::byte*>(mapping.data()), bytes, resident.data()) != 0) {
    throw SystemError("mincore", errno);
  }
  std::uint64_t in = 0;
  for (unsigned char r : resident) in += r & 1u;
  return static_cast<double>(in) / static_cast<double>(pages);
}

void drop_from_page_cache(int fd) {
  if (::fdatasync(fd) != 0) throw SystemError("fdatasync", errno);
  // posix_fadvise returns the error number instead of setting errno.
  if (const int err = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); err != 0) {
    throw SystemError("posix_fadvise(POSIX_FADV_DONTNEED)", err);
  }
}

void read_through_page_cache(int fd, std::uint64_t bytes) {
  constexpr std::size_t kPiece = std::size_t{8} << 20;
  const auto buffer = std::make_unique_for_overwrite<std::byte[]>(kPiece);
  std::uint64_t done = 0;
  while (done < bytes) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, bytes - done));
    const ssize_t got = ::pread(fd, buffer.get(), want, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw SystemError("pread", errno);
    if (got == 0) {
      throw CaseFailure("the file ended after " + std::to_string(done) + " of " +
                        std::to_string(bytes) + " bytes");
    }
    done += static_cast<std::uint64_t>(got);
  }
}

}  // namespace pathbench
