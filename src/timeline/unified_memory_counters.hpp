#pragma once

// CUPTI's unified-memory counters around a piece of work: how many GPU page-fault groups, CPU
// page faults and migrated bytes each way the work caused, as CUPTI recorded them.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "timeline/timeline.hpp"

namespace pathbench {

struct UnifiedMemoryCounts {
  std::uint64_t gpu_fault_groups = 0;
  std::uint64_t bytes_h2d = 0, bytes_d2h = 0;
  std::uint64_t bytes_d2d = 0;  // from one GPU to another; counted only when asked for
  std::uint64_t cpu_faults = 0;
  std::uint64_t lost_records = 0;  // what CUPTI itself reported lost (or without timestamps)
};

// What a timeline's unified-memory records add up to (analyze_timeline's sums, the CPU faults,
// the dropped records).
UnifiedMemoryCounts unified_memory_counts(const Timeline& timeline);

class UnifiedMemoryCounter {
 public:
  // Registers CUPTI (prepare_cupti_tracing): construct it once the CUDA context exists and
  // before allocating the managed memory whose migrations it must count, since CUPTI counts
  // none of an allocation made before it was initialised.
  // With `device_to_device`, CUPTI also counts the bytes moved from one GPU to another
  // (BYTES_TRANSFER_DTOD), for work that migrates pages between GPUs; off, the counters are the
  // ones every single-GPU capture configures.
  explicit UnifiedMemoryCounter(bool device_to_device = false);

  // The counts during `work`; nothing when CUPTI could not capture them (unavailable_reason()).
  std::optional<UnifiedMemoryCounts> count(const std::function<void()>& work);
  // Why the last capture that failed (or the registration) could not count; empty when none did.
  const std::string& unavailable_reason() const { return unavailable_; }
  // The records of the last counted work (the case's Chrome trace); empty before any.
  const Timeline& last_timeline() const { return last_; }

 private:
  bool device_to_device_;
  std::string unavailable_;
  Timeline last_;
};

}  // namespace pathbench
