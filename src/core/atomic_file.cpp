#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/errors.hpp"

namespace pathbench {

namespace {
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};
}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const auto parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::filesystem::create_directories(parent);
  std::string tmpl = (parent / ("." + path.filename().string() + ".XXXXXX")).string();
  FileDescriptor fd(::mkstemp(tmpl.data()));
  if (fd.get() < 0) throw SystemError("mkstemp(" + tmpl + ")", errno);
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::unlink(tmpl.c_str());
      throw SystemError("write(" + tmpl + ")", err);
    }
    written += static_cast<std::size_t>(n);
  }
  ::fchmod(fd.get(), 0644);
  if (::fsync(fd.get()) != 0 || ::close(fd.release()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw SystemError("fsync/close(" + tmpl + ")", err);
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw SystemError("rename(" + tmpl + " -> " + path.string() + ")", err);
  }
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SystemError("open(" + path.string() + ")", errno ? errno : ENOENT);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace pathbench
