#pragma once

// What a NUMA policy does when the memory it may use cannot hold a buffer: the buffer (mapped and
// its policy set, never touched) is faulted in page by page by a child process confined to a
// memory cgroup capped below the buffer's size. The child either finishes (the kernel reclaimed
// or spilled) or is killed (the OOM killer, as a bound allocation on a full node ends); the
// parent learns how far it got and, for a survivor, where its pages are.

#include <cstdint>
#include <string>

#include "placement/host_buffer.hpp"
#include "placement/page_placement.hpp"

namespace pathbench {

struct CappedTouchOutcome {
  std::uint64_t pages = 0;          // base pages of the buffer
  std::uint64_t pages_touched = 0;  // written by the child before it ended
  bool killed = false;              // by a signal (`signal`)
  int signal = 0;
  bool timed_out = false;       // still running after the limit: killed by pathbench
  std::uint64_t oom_kills = 0;  // the cgroup's count (0 where the kernel does not say)
  PagePlacement resident;       // the survivor's pages at its end (sampled); empty when killed
  double seconds = 0;           // from the first write to the child's end
  std::string cgroup;           // MemoryCgroup::describe()

  double touched_share() const {
    return pages == 0 ? 0.0 : static_cast<double>(pages_touched) / static_cast<double>(pages);
  }
  // "killed by SIGKILL (OOM killer, 1 kill in the cgroup) after 16384 of 65536 pages (25 %)"
  std::string describe() const;
};

// Throws SkipCase when no memory cgroup can be made here, SystemError when fork or the cgroup
// write fails. The child gets `limit_s` seconds.
CappedTouchOutcome touch_under_cap(const HostBuffer& buffer, std::uint64_t cap_bytes,
                                   double limit_s = 60.0);

}  // namespace pathbench
