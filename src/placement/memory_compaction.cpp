#include "placement/memory_compaction.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/text.hpp"
#include "core/unique_fd.hpp"

namespace pathbench {
namespace {

// What an operator reads to make compaction possible.
const char* hint(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
      return " (needs root)";
    case EROFS:
      return " (/proc/sys is read-only here: a container)";
    case ENOENT:
      return " (a kernel without CONFIG_COMPACTION)";
    default:
      return "";
  }
}

CompactionOutcome refused(const std::filesystem::path& path, const char* what, int err) {
  return {false, concat(what, " ", path.string(), ": ", std::strerror(err), hint(err))};
}

}  // namespace

CompactionOutcome compact_memory(const std::filesystem::path& root) {
  const std::filesystem::path path = root / "proc/sys/vm/compact_memory";
  // No O_CREAT: a missing file means the kernel has no compaction, never a file to make.
  const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return refused(path, "cannot open", errno);
  ssize_t written = 0;
  do {
    written = ::write(fd.get(), "1", 1);
  } while (written < 0 && errno == EINTR);
  if (written != 1) return refused(path, "cannot write 1 to", written < 0 ? errno : EIO);
  return {true, ""};
}

}  // namespace pathbench
