#pragma once

// A memory cgroup of pathbench's own, below the one this process is in, capped at a byte limit:
// where a child process runs that must not take more memory than that (host_memory's
// `memory_cap` cases, which show what a NUMA policy does when the memory it may use cannot hold
// a buffer). cgroup v1 (the memory controller's hierarchy) and v2 (memory.max) are both handled;
// a machine where neither can be made (no root, a read-only cgroupfs, v2 without the memory
// controller delegated) gives a skip reason instead.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pathbench {

// Where this process's memory cgroup is, from /proc/self/cgroup and /proc/self/mountinfo:
// the directory and the cgroup version (1 or 2). Nothing when neither file names one.
struct CgroupLocation {
  std::filesystem::path dir;
  int version = 0;
};
std::optional<CgroupLocation> find_memory_cgroup(std::string_view proc_self_cgroup,
                                                 std::string_view mountinfo);

class MemoryCgroup {
 public:
  // Makes the cgroup and sets its limit. Throws SkipCase saying why when it cannot.
  explicit MemoryCgroup(std::uint64_t limit_bytes);
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;
  // Removes the cgroup; its processes must have exited.
  ~MemoryCgroup();

  void add(pid_t pid) const;  // throws SystemError
  // Processes the OOM killer killed in it (memory.events / memory.oom_control); nothing when the
  // kernel does not count them.
  std::optional<std::uint64_t> oom_kills() const;
  const std::filesystem::path& path() const { return dir_; }
  int version() const { return version_; }
  std::string describe() const;  // "cgroup v1 /sys/fs/cgroup/memory/…/pathbench-cap-123, 64 MiB"

 private:
  std::filesystem::path dir_;
  int version_ = 0;
  std::uint64_t limit_ = 0;
};

}  // namespace pathbench
