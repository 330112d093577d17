#pragma once

// mlock of a range for the lock's lifetime, through the system calls themselves: the sanitizers
// intercept mlock/munlock as no-ops returning 0, and a sanitizer build would then time (and fail
// verifying) a lock that never happened.

#include <cstddef>

namespace pathbench {

class MemoryLock {
 public:
  MemoryLock() = default;
  // Locks [addr, addr + bytes). Refused for the limit or for memory (EPERM, ENOMEM): SkipCase
  // with RLIMIT_MEMLOCK and the fix; any other error: SystemError.
  MemoryLock(void* addr, std::size_t bytes);
  MemoryLock(MemoryLock&& other) noexcept;
  MemoryLock& operator=(MemoryLock&& other) noexcept;
  MemoryLock(const MemoryLock&) = delete;
  MemoryLock& operator=(const MemoryLock&) = delete;
  ~MemoryLock();  // munlock

  bool locked() const { return addr_ != nullptr; }

 private:
  void* addr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace pathbench
