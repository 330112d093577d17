#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "core/unique_fd.hpp"

namespace pathbench {

namespace {

// The file a write to `path` must replace: symbolic links followed to their final target. A link
// that leads nowhere it could end (a loop, or a folder on the way that is a loop) is refused as
// NotARegularFile: there is no file there to replace.
std::filesystem::path final_target(const std::filesystem::path& path) {
  constexpr int kMaxLinks = 40;  // the kernel's own limit (ELOOP)
  const auto loop = [&](const std::string& why) {
    return NotARegularFile(path.string() + " cannot be written: " + why +
                           "; pathbench writes regular files only");
  };
  std::filesystem::path target = path;
  for (int hops = 0;; ++hops) {
    std::error_code ec;
    const auto status = std::filesystem::symlink_status(target, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) throw loop(ec.message());
    if (!std::filesystem::is_symlink(status)) break;
    if (hops == kMaxLinks) throw loop(std::strerror(ELOOP));
    const auto next = std::filesystem::read_symlink(target, ec);
    if (ec) throw loop(ec.message());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target;
}

// The temporary file of the write in progress, for the stop-signal handler: a fixed buffer
// (no allocation in a handler) guarded by a flag.
char g_pending_temp[PATH_MAX + 1];
std::atomic<bool> g_pending_set{false};

class PendingTemporary {
 public:
  explicit PendingTemporary(const std::string& path) {
    if (path.size() > PATH_MAX || g_pending_set.load()) return;  // the next write cleans up
    std::memcpy(g_pending_temp, path.c_str(), path.size() + 1);
    g_pending_set.store(true);
    registered_ = true;
  }
  PendingTemporary(const PendingTemporary&) = delete;
  PendingTemporary& operator=(const PendingTemporary&) = delete;
  ~PendingTemporary() {
    if (registered_) g_pending_set.store(false);
  }

 private:
  bool registered_ = false;
};

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "host";
  std::string out;
  for (const char* c = buf; *c != '\0'; ++c) out += (*c == '/' ? '_' : *c);
  return out;
}

std::string temporary_prefix(const std::filesystem::path& path) {
  return concat(".", path.filename().string(), ".tmp-");
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

std::filesystem::path check_output_target(const std::filesystem::path& requested) {
  const std::filesystem::path path = final_target(requested);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      throw NotARegularFile(path.string() + " is " + kind_of(st.st_mode) +
                            ", not a regular file; pathbench writes regular files only and never "
                            "replaces anything else");
    }
  } else if (errno == ELOOP || errno == ENOTDIR) {
    // A folder on the way is a link loop, or a file: nothing can ever be written there.
    throw NotARegularFile(path.string() + " cannot be written: " + std::strerror(errno));
  }
  return path;
}

void write_file_atomically(const std::filesystem::path& requested, std::string_view content) {
  const std::filesystem::path path = check_output_target(requested);
  const auto parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::filesystem::create_directories(parent);
  remove_stale_temporary_files(path);
  std::string tmpl = (parent / (temporary_prefix(path) + host_name() + "-" +
                                std::to_string(::getpid()) + ".XXXXXX"))
                         .string();
  UniqueFd fd(::mkstemp(tmpl.data()));
  if (fd.get() < 0) throw_write_error("mkstemp(" + tmpl + ")", errno);
  const PendingTemporary pending(tmpl);
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::unlink(tmpl.c_str());
      throw_write_error("write(" + tmpl + ")", err);
    }
    written += static_cast<std::size_t>(n);
  }
  ::fchmod(fd.get(), 0644);
  // close after a failed fsync still releases the descriptor; its error is the one to report.
  if (::fsync(fd.get()) != 0 || ::close(fd.release()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw_write_error("fsync/close(" + tmpl + ")", err);
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw_write_error("rename(" + tmpl + " -> " + path.string() + ")", err);
  }
}

void write_output_file(const std::filesystem::path& path, std::string_view content,
                       std::string_view what) {
  try {
    write_file_atomically(path, content);
  } catch (const DiskFull&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path.string(), "", "cannot write " + std::string(what) + ": " + e.what());
  }
}

std::size_t remove_stale_temporary_files(const std::filesystem::path& requested) {
  const std::filesystem::path path = final_target(requested);
  const auto parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::string prefix = temporary_prefix(path) + host_name() + "-";
  std::size_t removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    // <prefix><pid>.XXXXXX: only a process of this host that is gone; another host's writer on
    // a shared folder, or a live one here, is left alone.
    const std::string_view rest = std::string_view(name).substr(prefix.size());
    const auto dot = rest.find('.');
    if (dot == std::string_view::npos || rest.size() - dot != 7) continue;
    long pid = 0;
    const auto [end_ptr, err] = std::from_chars(rest.data(), rest.data() + dot, pid);
    if (err != std::errc() || end_ptr != rest.data() + dot || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code remove_ec;
    if (std::filesystem::remove(it->path(), remove_ec)) ++removed;
  }
  return removed;
}

void remove_pending_temporary_file() noexcept {
  if (g_pending_set.load()) ::unlink(g_pending_temp);
}

std::string read_text_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  UniqueFd fd(open_regular_file(path, max_bytes));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw SystemError("fstat(" + path.string() + ")", errno);
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

int open_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  // The checks of read_text_file, for a reader that streams the file instead of holding it.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
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
  return fd.release();
}

}  // namespace pathbench
