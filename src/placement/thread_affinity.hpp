#pragma once

#include <sched.h>

#include <vector>

namespace pathbench {

// Binds the calling thread to `cpus` for the scope's lifetime and restores the previous mask.
// Throws SystemError when the kernel refuses (e.g. none of the CPUs is in the cpuset).
class ThreadAffinityScope {
 public:
  explicit ThreadAffinityScope(const std::vector<int>& cpus);
  ThreadAffinityScope(const ThreadAffinityScope&) = delete;
  ThreadAffinityScope& operator=(const ThreadAffinityScope&) = delete;
  ~ThreadAffinityScope();

 private:
  cpu_set_t previous_;
};

}  // namespace pathbench
