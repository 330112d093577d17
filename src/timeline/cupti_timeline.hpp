#pragma once

#include <memory>
#include <optional>
#include <string>

#include "timeline/timeline.hpp"

namespace pathbench {

// Captures CUPTI activity records (memcpy with memory kinds, memset, concurrent kernels,
// synchronisation, NVTX markers of the `pathbench` domain, unified-memory counters) between
// construction and collect(). One capture at a time per process. When CUPTI cannot be
// initialised (another profiler attached, no permission, no GPU, built without CUDA) the
// capture is inert and collect() returns a Timeline whose unavailable_reason says why: the run
// goes on without a timeline.
// Registers pathbench's CUPTI activity callbacks now (once per process; later calls return at
// once). CUPTI's unified-memory counters report only managed allocations made after CUPTI was
// initialised: a buffer from cudaMallocManaged before this call produced no migration or fault
// record at all on the H200 (driver 580, CUDA 13.0). Call it before allocating managed memory
// whose migrations a capture must count. Returns "" on success, else why CUPTI is unavailable.
std::string prepare_cupti_tracing();

class TimelineCapture {
 public:
  struct Options {
    bool unified_memory_counters = false;  // configured after the CUDA context exists
    // With unified_memory_counters: bytes moved from one GPU to another too. Off by default, so
    // a capture that needs no more configures what single-GPU captures always have.
    bool unified_memory_device_to_device = false;
  };
  explicit TimelineCapture(Options options);
  TimelineCapture(const TimelineCapture&) = delete;
  TimelineCapture& operator=(const TimelineCapture&) = delete;
  ~TimelineCapture();

  bool active() const { return reason_.empty(); }
  const std::string& unavailable_reason() const { return reason_; }
  // Flushes CUPTI's buffers, disables the activity kinds and returns what was recorded since
  // construction (or since the previous collect()).
  Timeline collect();

 private:
  Options options_;
  std::string reason_;
};

}  // namespace pathbench
