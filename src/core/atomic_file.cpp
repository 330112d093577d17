#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
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

namespace {

// The file a write to `path` must replace: symbolic links followed to their final target.
std::filesystem::path final_target(const std::filesystem::path& path) {
  constexpr int kMaxLinks = 40;  // the kernel's own limit (ELOOP)
  std::filesystem::path target = path;
  for (int hops = 0; std::filesystem::is_symlink(std::filesystem::symlink_status(target)); ++hops) {
    if (hops == kMaxLinks) throw SystemError("following the links of " + path.string(), ELOOP);
    const auto next = std::filesystem::read_symlink(target);
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target;
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void write_file_atomically(const std::filesystem::path& requested, std::string_view content) {
  const std::filesystem::path path = final_target(requested);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw NotARegularFile(path.string() + " is " + kind_of(st.st_mode) +
                          ", not a regular file; pathbench writes regular files only and never "
                          "replaces anything else");
  }
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

std::string read_text_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) throw SystemError("open(" + path.string() + ")", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw SystemError("fstat(" + path.string() + ")", errno);
  if (!S_ISREG(st.st_mode)) {
    throw NotARegularFile(path.string() + " is " + kind_of(st.st_mode) +
                          ", not a regular file; pathbench reads regular files only");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    throw std::length_error(path.string() + " is " + std::to_string(st.st_size) +
                            " bytes, more than the " + std::to_string(max_bytes) +
                            " this input may have");
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw SystemError("read(" + path.string() + ")", errno);
    }
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
      throw std::length_error(path.string() + " grew beyond " + std::to_string(max_bytes) +
                              " bytes while being read");
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace pathbench
