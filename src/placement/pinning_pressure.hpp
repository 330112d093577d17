#pragma once

// A share of the host's RAM locked for a case's lifetime: the case then measures the host with
// that much memory out of reach of reclaim, compaction and the page cache, as a serving process
// that pins its staging buffers or KV-cache offload leaves the rest of the node.

#include <cstdint>
#include <optional>

#include "placement/host_buffer.hpp"
#include "placement/memory_lock.hpp"
#include "result/vocabulary.hpp"

namespace pathbench {

struct PinningPressureRequest {
  int pct = 0;              // of MemTotal
  std::uint64_t bytes = 0;  // what that share is on this machine
  std::uint64_t mem_total_bytes = 0;
  int cap_pct = 0;  // the run's cap it was judged against
  std::uint64_t memlock_limit_bytes = 0;
};

class PinningPressure {
 public:
  // Maps and mlocks `request.bytes` of anonymous 4 KiB pages (mlock faults every page in), then
  // reads back from /proc/self/smaps that the whole range is VM_LOCKED and resident: SkipCase
  // when the kernel refuses the lock (limit, memory), CaseFailure when it claims a lock it did
  // not take.
  explicit PinningPressure(const PinningPressureRequest& request);

  // What is held: share, bytes, how long locking took, MemAvailable before and while held, the
  // locked-memory limit, smaps' Locked of the range. Fails when the lock no longer holds.
  Check check() const;
  double lock_seconds() const { return lock_seconds_; }

 private:
  PinningPressureRequest request_;
  std::uint64_t available_before_ = 0, available_held_ = 0;
  double lock_seconds_ = 0;
  std::optional<HostBuffer> buffer_;
  MemoryLock lock_;
};

}  // namespace pathbench
