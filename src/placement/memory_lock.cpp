#include "placement/memory_lock.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "inventory/requirements.hpp"

namespace pathbench {

MemoryLock::MemoryLock(void* addr, std::size_t bytes) {
  if (::syscall(SYS_mlock, addr, bytes) == 0) {
    addr_ = addr;
    bytes_ = bytes;
    return;
  }
  const int err = errno;
  if (err == EPERM || err == ENOMEM) {
    rlimit limit{};
    ::getrlimit(RLIMIT_MEMLOCK, &limit);
    const std::string current = limit.rlim_cur == RLIM_INFINITY
                                    ? std::string("unlimited")
                                    : format_bytes(static_cast<std::uint64_t>(limit.rlim_cur));
    throw SkipCase(concat("mlock of ", format_bytes(bytes), " refused (", std::strerror(err),
                          "); RLIMIT_MEMLOCK is ", current, " (or memory is short); ",
                          memlock_fix()));
  }
  throw SystemError(concat("mlock(", std::to_string(bytes), " bytes)"), err);
}

MemoryLock::MemoryLock(MemoryLock&& other) noexcept
    : addr_(std::exchange(other.addr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MemoryLock& MemoryLock::operator=(MemoryLock&& other) noexcept {
  if (this != &other) {
    MemoryLock old(std::move(*this));  // unlocks what this held, after taking the other's
    addr_ = std::exchange(other.addr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

MemoryLock::~MemoryLock() {
  if (addr_ != nullptr) ::syscall(SYS_munlock, addr_, bytes_);
}

}  // namespace pathbench
